//! Reproducing a stored error for repeated `status()` calls.
//!
//! [`Error`] is not `Clone` (it holds a `std::io::Error`), yet iterators keep their first error
//! and report it on every `status()` call. Copying it variant by variant keeps the kind (a
//! `Corruption` stays a `Corruption` with the same file and offset), which callers and tools
//! rely on to tell damaged data from other failures.

use crate::error::Error;

/// An equivalent copy of `e`: same variant and fields; an I/O source keeps its kind and message.
pub fn copy_error(e: &Error) -> Error {
    match e {
        Error::Io { context, source } => Error::io(
            context.clone(),
            std::io::Error::new(source.kind(), source.to_string()),
        ),
        Error::Corruption {
            file,
            offset,
            detail,
        } => Error::corruption(file.clone(), *offset, detail.clone()),
        Error::InvalidArgument(s) => Error::InvalidArgument(s.clone()),
        Error::InvalidState(s) => Error::InvalidState(s.clone()),
        Error::Background(e) => Error::Background(e.clone()),
        Error::Locked { path, detail } => Error::Locked {
            path: path.clone(),
            detail: detail.clone(),
        },
        Error::Closed => Error::Closed,
        Error::ReadOnly(p) => Error::ReadOnly(p.clone()),
        Error::WriteStall(s) => Error::WriteStall(s.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copied_errors_keep_their_variant_and_fields() {
        let c = copy_error(&Error::corruption("/db/000009.sst", 4096, "bad crc"));
        match c {
            Error::Corruption {
                file,
                offset,
                detail,
            } => {
                assert_eq!(file, std::path::PathBuf::from("/db/000009.sst"));
                assert_eq!(offset, 4096);
                assert_eq!(detail, "bad crc");
            }
            other => panic!("expected corruption, got {other}"),
        }
        let io = Error::io("reading x", std::io::Error::other("disk gone"));
        match copy_error(&io) {
            Error::Io { context, source } => {
                assert_eq!(context, "reading x");
                assert_eq!(source.kind(), std::io::ErrorKind::Other);
                assert_eq!(source.to_string(), "disk gone");
            }
            other => panic!("expected I/O error, got {other}"),
        }
        assert!(matches!(copy_error(&Error::Closed), Error::Closed));
    }
}
