//! The Parquet shard contract: the schema name and version each npgx table carries in its
//! key-value metadata (docs/cluster.md). The writers in [`crate::report`] stamp them and
//! [`crate::merge`] checks them, so both take them from here.

/// A shard schema: its name and version, written in the Parquet file's key-value metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardSchema {
    pub name: &'static str,
    pub version: u32,
}

/// The `dump-scan --format parquet` shard (one row per tensor).
pub const SCAN_SHARD: ShardSchema = ShardSchema {
    name: "npgx.dump-scan.shard",
    version: 1,
};

/// The `dump-compare --format parquet` table (one row per compared pair), same keys and
/// collective columns as the scan shard.
pub const COMPARE_SHARD: ShardSchema = ShardSchema {
    name: "npgx.dump-compare.shard",
    version: 1,
};

/// The table `npgx merge --format parquet` writes (one row per anomalous rank and step).
pub const MERGE_TABLE: ShardSchema = ShardSchema {
    name: "npgx.merge.table",
    version: 1,
};

/// Key-value metadata keys of a shard.
pub const META_SCHEMA: &str = "npgx.schema";
pub const META_VERSION: &str = "npgx.schema_version";
pub const META_WRITER: &str = "npgx.writer";
/// Files the scan that wrote a `dump-scan` shard could not read (a count).
pub const META_UNREADABLE: &str = "npgx.unreadable_files";
