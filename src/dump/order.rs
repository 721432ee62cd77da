//! What both engines over a dump tree (scan, compare) and their reports share about the order of
//! operator executions: the key of an execution within its group ([`OpKey`], [`exec_key`]),
//! which executions are collectives and how many precede a given one ([`is_collective`],
//! [`collectives_at`]), and the part of a model name two runs share ([`model_key`]). The scan's
//! own ordering of tensors (interned keys, sorted runs) is `crate::scan::order`.

use crate::dump::records::OpRef;

/// Sort key of an operator execution within its group.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OpKey {
    pub(crate) timestamp: Option<u64>,
    pub(crate) counter: Option<u64>,
    pub(crate) task_id: Option<u64>,
    pub(crate) stream_id: Option<u64>,
    pub(crate) op_name: String,
    /// Set for files whose name does not tie them to an op (each is its own execution).
    pub(crate) path: String,
}

/// Where an operator execution sits in its group's execution order; files with equal keys are
/// one execution (the `.npy` files converted from one dump).
pub fn exec_key(op: &OpRef) -> OpKey {
    let tied = op.task_id.is_some() || op.timestamp.is_some();
    OpKey {
        timestamp: op.timestamp,
        counter: op.counter,
        task_id: op.task_id,
        stream_id: op.stream_id,
        op_name: op.op_name.clone(),
        path: if tied { String::new() } else { op.path.clone() },
    }
}

/// Whether an operator execution is a collective communication (HCCL) operator: a GE op type
/// starting with `Hcom` (`HcomAllReduce`, `HcomAllGather`, `HcomBroadcast`, `HcomReduceScatter`,
/// `HcomAllToAllV`, `HcomSend`, `HcomReceive`, …) or an op name containing `hcom`; for files with
/// no op type (FX nodes of torchair `.npy` and npugraph_ex `.pt` dumps), a node name containing
/// `all_reduce`, `all_gather`, `reduce_scatter` or `all_to_all` (the c10d functional
/// collectives); an msprobe call with the `Distributed` prefix
/// ([`npgx_parsers::msprobe::is_collective`]). Every rank passes the k-th collective of a step at the same point of the
/// program (docs/cluster.md).
pub fn is_collective(op: &OpRef) -> bool {
    is_collective_op(&op.op_name, op.op_type.as_deref())
}

/// [`is_collective`] from an op name and type.
pub fn is_collective_op(op_name: &str, op_type: Option<&str>) -> bool {
    const FX: [&str; 4] = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"];
    if npgx_parsers::msprobe::is_collective(op_name) {
        return true;
    }
    let name = op_name.to_ascii_lowercase();
    match op_type {
        Some(ty) => {
            ty.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("hcom")) || name.contains("hcom")
        }
        None => name.contains("hcom") || FX.iter().any(|f| name.contains(f)),
    }
}

/// Given the ascending positions of a group's collectives: how many executed strictly before the
/// operator execution at `order`, and its own collective ordinal if it is one.
pub fn collectives_at(collectives: &[usize], order: usize) -> (usize, Option<usize>) {
    let before = collectives.partition_point(|&c| c < order);
    let own = (collectives.get(before) == Some(&order)).then_some(before);
    (before, own)
}

/// The part of a model name that two runs share: `ge_default_<digits>_<n>` (run-stamped by
/// torchair) becomes its graph index `<n>`; other names are kept.
pub fn model_key(model: &str) -> String {
    if let Some(rest) = model.strip_prefix("ge_default_") {
        if let Some((stamp, n)) = rest.split_once('_') {
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if digits(stamp) && digits(n) {
                return n.to_string();
            }
        }
    }
    model.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collectives_are_hcom_ops_and_fx_collectives() {
        for (name, ty, want) in [
            ("hcom_allreduce_1", Some("HcomAllReduce"), true),
            ("layer/AllGather", Some("HcomAllGather"), true),
            ("x_hcom_broadcast", Some("Identity"), true),
            ("BroadcastTo_3", Some("BroadcastTo"), false),
            ("all_reduce_1", Some("Add"), false),
            ("all_reduce_1", None, true),
            ("reduce_scatter_tensor", None, true),
            ("broadcast_tensors", None, false),
        ] {
            assert_eq!(is_collective_op(name, ty), want, "{name} {ty:?}");
        }
        let c = [2, 5, 7];
        assert_eq!(collectives_at(&c, 0), (0, None));
        assert_eq!(collectives_at(&c, 5), (1, Some(1)));
        assert_eq!(collectives_at(&c, 6), (2, None));
        assert_eq!(collectives_at(&c, 9), (3, None));
    }
}
