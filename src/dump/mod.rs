//! Dump scanning: walk a dump tree, decode every file, find NaN / Inf / overflow.
