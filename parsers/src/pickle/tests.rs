use super::*;

fn kind(data: &[u8]) -> ErrorKind {
    parse(data).expect_err("must fail").kind
}

#[test]
fn scalars_strings_and_containers() {
    // {'a': [1, -2, 3.5, None, True], 'b': (b'xy', 70000)} (protocol 2)
    let b = b"\x80\x02}q\x00(X\x01\x00\x00\x00a]q\x01(K\x01J\xfe\xff\xff\xffG@\x0c\x00\x00\x00\x00\x00\x00N\x88eX\x01\x00\x00\x00bC\x02xyJp\x11\x01\x00\x86u.";
    let p = parse(b).expect("reads");
    let Value::Dict(kv) = p.get(p.root) else {
        panic!("{:?}", p.get(p.root))
    };
    assert_eq!(kv.len(), 2);
    assert_eq!(p.get(kv[0].0), &Value::Str("a".into()));
    let Value::List(l) = p.get(kv[0].1) else {
        panic!()
    };
    let got: Vec<&Value> = l.iter().map(|&i| p.get(i)).collect();
    assert_eq!(
        got,
        [
            &Value::Int(1),
            &Value::Int(-2),
            &Value::Float(3.5),
            &Value::None,
            &Value::Bool(true)
        ]
    );
    let Value::Tuple(t) = p.get(kv[1].1) else {
        panic!()
    };
    assert_eq!(p.get(t[0]), &Value::Bytes(2));
    assert_eq!(p.get(t[1]), &Value::Int(70000));
}

#[test]
fn long1_is_signed_little_endian() {
    let p = parse(b"\x8a\x02\x00\xff.").expect("reads");
    assert_eq!(p.get(p.root), &Value::Int(-256));
    let p = parse(b"\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09.").expect("reads");
    assert_eq!(p.get(p.root), &Value::BigInt);
}

#[test]
fn globals_and_calls_are_recorded_not_run() {
    let p =
        parse(b"\x80\x04\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x02id\x85R.").expect("reads");
    let Value::Call(c) = p.get(p.root) else {
        panic!()
    };
    assert_eq!(
        p.get(c.callable),
        &Value::Global {
            module: "os".into(),
            name: "system".into()
        }
    );
}

#[test]
fn memo_gets_share_the_value() {
    // l = []; l.append(l); (l, l) — a cycle and a shared value
    let p = parse(b"]q\x00h\x00ah\x00h\x00\x86.").expect("reads");
    let Value::Tuple(t) = p.get(p.root) else {
        panic!()
    };
    assert_eq!(t[0], t[1]);
    assert_eq!(p.get(t[0]), &Value::List(vec![t[0]]));
    let mut seen = Vec::new();
    p.walk(p.root, |id, _| {
        seen.push(id);
        true
    });
    assert_eq!(seen, vec![p.root, t[0]]);
}

/// `n` doublings: memo k+1 = [memo k, memo k]. Copying would build 2^n lists.
fn memo_bomb(n: u8) -> Vec<u8> {
    let mut b = b"\x80\x02]\x94".to_vec();
    for k in 0..n {
        b.extend_from_slice(&[b'(', b'h', k, b'h', k, b'l', 0x94]);
    }
    b.push(b'.');
    b
}

#[test]
fn a_memo_bomb_stays_small() {
    let p = parse(&memo_bomb(200)).expect("reads");
    assert_eq!(p.values.len(), 201);
    let mut visits = 0;
    p.walk(p.root, |_, _| {
        visits += 1;
        true
    });
    assert_eq!(visits, 201);
}

#[test]
fn deep_nesting_is_refused_and_dropping_does_not_recurse() {
    // ((((…()…)))) 100 000 levels with TUPLE1
    let mut b = vec![b')'];
    b.extend(std::iter::repeat_n(0x85, 100_000));
    b.push(b'.');
    assert_eq!(kind(&b), ErrorKind::TooDeep(1000));
    // within a generous limit the value builds and drops flat
    let lim = Limits {
        depth: u32::MAX,
        ..Limits::default()
    };
    let p = parse_with(&b, lim).expect("reads");
    assert_eq!(p.values.len(), 100_001);
    drop(p);
    // [[[…]]] with MARK … LIST
    let mut b = vec![b'('; 5000];
    b.extend(std::iter::repeat_n(b'l', 5000));
    b.push(b'.');
    assert_eq!(kind(&b), ErrorKind::TooDeep(1000));
}

#[test]
fn appending_into_shared_lists_cannot_nest_past_the_limit() {
    // l = []; then 2000 times: l.append(l)
    let mut b = b"]q\x00".to_vec();
    for _ in 0..2000 {
        b.extend_from_slice(b"h\x00a");
    }
    b.push(b'.');
    assert_eq!(kind(&b), ErrorKind::TooDeep(1000));
}

#[test]
fn object_budget() {
    let lim = Limits {
        objects: 100,
        ..Limits::default()
    };
    // one list, then 200 appends of the same shared value
    let mut b = b"]q\x00N".to_vec();
    b.extend_from_slice(&[b'q', 1]);
    b.push(b'0');
    for _ in 0..200 {
        b.extend_from_slice(b"h\x01a");
    }
    b.push(b'.');
    assert_eq!(
        parse_with(&b, lim).expect_err("too many").kind,
        ErrorKind::TooManyObjects(100)
    );
    assert!(parse(&b).is_ok());
    let big = vec![b'N'; 200];
    assert_eq!(
        parse_with(&big, lim).expect_err("too many").kind,
        ErrorKind::TooManyObjects(100)
    );
}

#[test]
fn input_size_limit() {
    let lim = Limits {
        bytes: 4,
        ..Limits::default()
    };
    assert_eq!(
        parse_with(b"NNNN.", lim).expect_err("large").kind,
        ErrorKind::TooLarge(5, 4)
    );
}

#[test]
fn malformed_inputs_are_errors_with_offsets() {
    assert_eq!(kind(b""), ErrorKind::Truncated);
    assert_eq!(kind(b"N"), ErrorKind::Truncated);
    assert_eq!(kind(b"X\xff\xff\xff\xffab."), ErrorKind::Truncated);
    assert_eq!(kind(b"\x8b\xff\xff\xff\xff."), ErrorKind::NegativeLength);
    assert_eq!(
        kind(b"\x8e\xff\xff\xff\xff\xff\xff\xff\xff."),
        ErrorKind::Truncated
    );
    assert_eq!(kind(b"."), ErrorKind::Underflow);
    assert_eq!(kind(b"(."), ErrorKind::MarkAsValue);
    assert_eq!(kind(b"Nt."), ErrorKind::NoMark);
    assert_eq!(kind(b"h\x05."), ErrorKind::MemoUnset(5));
    assert_eq!(kind(b"NNa."), ErrorKind::Type("APPEND", "a list"));
    assert_eq!(
        kind(b"}(Nu."),
        ErrorKind::Type("SETITEMS", "key/value pairs")
    );
    assert_eq!(kind(b"I1\n."), ErrorKind::Unsupported(b'I'));
    assert_eq!(kind(b"(N\x86."), ErrorKind::MarkAsValue);
    assert_eq!(kind(b"cos\nsys"), ErrorKind::Truncated);
    let e = parse(b"NN\x97.").expect_err("fails");
    assert_eq!(e.offset, 2);
    assert_eq!(e.to_string(), "pickle byte 2: opcode 0x97 is not supported");
}

#[test]
fn garbage_never_panics() {
    let mut seed = 0x2545_F491u32;
    let ops = b"()t]l}dsaeu.NKJMGXq h j\x80\x85\x86\x87\x88\x89\x8a\x8c\x93\x94\x95QRb012\x81\x8f\x90\x91";
    for len in 0..3000 {
        let bytes: Vec<u8> = (0..len % 200)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let r = (seed >> 8) as usize;
                if r % 3 == 0 {
                    (r >> 4) as u8
                } else {
                    ops[(r >> 4) % ops.len()]
                }
            })
            .collect();
        if let Ok(p) = parse(&bytes) {
            p.walk(p.root, |_, _| true);
        }
    }
}
