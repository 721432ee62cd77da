//! One physical line through the line-level grammars: header, content prefix, console prefixes,
//! file-name classification, torch_npu lines, the AI Core recogniser and the key/value bag; and
//! the header cache over the data's lines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npgx_parsers::aicore::evidence::classify;
use npgx_parsers::cann_error::{codes_in, parse_item, torch_npu::parse_torch_npu_line};
use npgx_parsers::kv::KvBag;
use npgx_parsers::line_prefix::strip_prefixes;
use npgx_parsers::plog::content::parse_content;
use npgx_parsers::plog::path::classify as classify_path;
use npgx_parsers::plog::{parse_header, BoundEnd, HeaderCache, PlogRecord, PlogTime};

fuzz_target!(|data: &[u8]| {
    if let Some((h, rest)) = parse_header(data) {
        let text = String::from_utf8_lossy(rest);
        let _ = parse_content(h.module, &text);
    }
    // The header cache reads the lines of a file in order: it must give parse_header's answer.
    let mut cache = HeaderCache::new();
    for line in data.split(|&b| b == b'\n') {
        assert_eq!(
            cache.parse(line).map(|(h, rest, _)| (h, rest)),
            parse_header(line)
        );
    }
    let _ = PlogRecord::from_line(1, data).map(|r| r.full_message());
    let s = String::from_utf8_lossy(data);
    let _ = strip_prefixes(&s);
    let _ = classify(&s);
    let _ = codes_in(&s);
    let _ = parse_item(1, &s);
    let _ = parse_torch_npu_line(&s);
    let _ = classify_path(&s);
    let _ = PlogTime::parse_bound(&s, BoundEnd::Lower);
    let _ = PlogTime::parse_bound(&s, BoundEnd::Upper);
    let bag = KvBag::new(&s);
    let _ = (
        bag.u64("stream_id"),
        bag.after("serial number is "),
        bag.text("fault kernel_name"),
    );
});
