//! Golden files: compare a text with `tests/golden/<name>.txt`; `LAZYFUSE_BLESS=1`
//! rewrites the file instead; a mismatch panics with a line diff.

use std::path::PathBuf;

/// Compares `actual` with the golden file `tests/golden/<name>.txt`.
pub fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if std::env::var_os("LAZYFUSE_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing {}; run with LAZYFUSE_BLESS=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        let mut diff = String::new();
        let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
        for i in 0..e.len().max(a.len()) {
            match (e.get(i), a.get(i)) {
                (Some(x), Some(y)) if x == y => diff.push_str(&format!("  {x}\n")),
                (x, y) => {
                    if let Some(x) = x {
                        diff.push_str(&format!("- {x}\n"));
                    }
                    if let Some(y) = y {
                        diff.push_str(&format!("+ {y}\n"));
                    }
                }
            }
        }
        panic!("golden {name} differs (LAZYFUSE_BLESS=1 to accept):\n{diff}");
    }
}
