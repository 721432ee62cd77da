//! Which versions a pasted output states: torch, torch_npu, CANN and the chip, as users and
//! tools write them — `torch 2.1.0`, `torch==2.5.1`, `torch_npu-2.5.1.post1`, `PyTorch 2.1`,
//! `CANN 8.0.RC3`, `8.0.0.beta1`, `ascend-toolkit/8.0`, `Ascend910B2`, `910B4`, `310P3`, `Atlas
//! 800I A2`. A paste that lacks one of them leaves the diagnosis open where that version decides
//! (an operator missing from an old CANN, a chip a release does not support): the skill asks the
//! paste's author for exactly the missing ones.
//!
//! Grammar, case-insensitive, per version:
//! ```text
//! torch     := ("torch" | "pytorch") sep version      (not torch_npu / torch-npu / torchair)
//! torch_npu := ("torch_npu" | "torch-npu") sep version
//! cann      := "cann" [" version"] sep version | digits "." digits "." ("rc" | "alpha" | "beta") digits
//!            | "ascend-toolkit/" digit | "cann-" digit
//! chip      := "ascend" ("910" | "310" | "950") … | ("910" | "310" | "950") ("a"|"b"|"c"|"p"|"pr") [digits]
//!            | "atlas " digits | "soc_version"
//! sep       := "==" | "-" | ":" | "=" | " " | " version" [":"] " "      (then an optional "v")
//! ```
//! What it is not for: reading the versions' values (the triage tree's `env.txt` has them).

use std::sync::OnceLock;

use regex::Regex;

/// The versions a text states.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stated {
    pub torch: bool,
    pub torch_npu: bool,
    pub cann: bool,
    pub chip: bool,
}

impl Stated {
    /// The names of the versions the text does not state, in a fixed order.
    pub fn missing(&self) -> Vec<&'static str> {
        [
            (self.torch, "torch"),
            (self.torch_npu, "torch_npu"),
            (self.cann, "CANN"),
            (self.chip, "chip"),
        ]
        .into_iter()
        .filter(|(stated, _)| !stated)
        .map(|(_, name)| name)
        .collect()
    }
}

struct Patterns {
    torch: Regex,
    torch_npu: Regex,
    cann: Regex,
    chip: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let sep = r"(?:==|=|-|:|\s+version\s*:?\s*|\s*:\s*|\s+)v?";
        let re = |s: &str| Regex::new(s).expect("a valid pattern");
        Patterns {
            torch: re(&format!(r"(?i)(?:^|[^a-z_.-])(?:py)?torch{sep}\d+\.\d+")),
            torch_npu: re(&format!(r"(?i)torch[_-]npu{sep}\d+\.\d+")),
            cann: re(&format!(
                r"(?i)(?:\bcann(?:\s+version)?{sep}\d+\.\d+|\b\d+\.\d+\.(?:\d+\.)?(?:rc|alpha|beta)\d+|ascend-toolkit/\d|\bcann-\d)"
            )),
            chip: re(
                r"(?i)(?:ascend\s?(?:910|310|950)|\b(?:910|310|950)(?:[abcp]|pr)\d{0,2}\b|\batlas\s+\d{3}|\bsoc_?version)",
            ),
        }
    })
}

/// Which of torch, torch_npu, CANN and the chip `text` states. Never panics; linear in the text.
pub fn stated(text: &str) -> Stated {
    let p = patterns();
    Stated {
        torch: p.torch.is_match(text),
        torch_npu: p.torch_npu.is_match(text),
        cann: p.cann.is_match(text),
        chip: p.chip.is_match(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_way_of_writing_a_version() {
        for (text, want) in [
            (
                "torch 2.1.0\ntorch_npu 2.1.0.post3",
                (true, true, false, false),
            ),
            (
                "pip list: torch==2.5.1 torch-npu==2.5.1",
                (true, true, false, false),
            ),
            ("PyTorch version: 2.7.1+cpu", (true, false, false, false)),
            ("CANN 8.0.RC3 on Ascend910B2", (false, false, true, true)),
            (
                "/usr/local/Ascend/ascend-toolkit/8.0.0/lib64",
                (false, false, true, false),
            ),
            ("cann version: 8.1.RC1, 910B4", (false, false, true, true)),
            (
                "torch-npu 2.5.1.dev20250218 with CANN 8.0.0.beta1",
                (false, true, true, false),
            ),
            (
                "Atlas 800I A2, 310P3 and soc_version 104",
                (false, false, false, true),
            ),
            (
                "site-packages/torch_npu-2.1.0.post6.dist-info",
                (false, true, false, false),
            ),
        ] {
            let s = stated(text);
            assert_eq!((s.torch, s.torch_npu, s.cann, s.chip), want, "{text}");
        }
    }

    #[test]
    fn not_versions() {
        let s = stated(
            "File \"/x/torch/_dynamo/eval_frame.py\", line 465, in _fn\nimport torch_npu\ntorchair 0.1\nerror code is 507015\nline 910 of x.py",
        );
        assert_eq!(s, Stated::default());
        assert_eq!(s.missing(), vec!["torch", "torch_npu", "CANN", "chip"]);
        assert!(stated("").missing().len() == 4);
        // The worst line: long, non-ASCII, no panic.
        let junk = "é910".repeat(100_000);
        let _ = stated(&junk);
    }
}
