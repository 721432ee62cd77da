//! Arbitrary bytes as a dump_config.json: the position scanner of `dump-config check` and the
//! parent walk of every path it recorded.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let map = npgx_parsers::dump_config::locate(data);
    for path in map.keys() {
        let _ = npgx_parsers::dump_config::position(&map, &format!("{path}.x[1]"));
    }
});
