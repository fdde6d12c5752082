//! Golden files: compare a text with `tests/golden/<name>.txt`; `LAZYFUSE_BLESS=1`
//! rewrites the file instead; a mismatch panics with a unified line diff
//! ([`line_diff`]).

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
        let diff = line_diff(&expected, actual);
        panic!("golden {name} differs (LAZYFUSE_BLESS=1 to accept):\n{diff}");
    }
}

/// Lines of context around each change in [`line_diff`].
const CONTEXT: usize = 3;

/// A unified diff of two texts by lines: hunks headed `@@ -a,n +b,m @@` with
/// [`CONTEXT`] unchanged lines around the changes, removed lines as `- `, added
/// as `+ `. The lines matched are a longest common subsequence, so one inserted
/// line shows as one `+` line rather than as every later line changed.
pub fn line_diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    // The common prefix and suffix need no table.
    let prefix = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let suffix = e[prefix..]
        .iter()
        .rev()
        .zip(a[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (em, am) = (&e[prefix..e.len() - suffix], &a[prefix..a.len() - suffix]);
    // lcs[i][j]: the longest common subsequence of em[i..] and am[j..].
    let mut lcs = vec![vec![0u32; am.len() + 1]; em.len() + 1];
    for i in (0..em.len()).rev() {
        for j in (0..am.len()).rev() {
            lcs[i][j] = if em[i] == am[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // The edit script over the whole texts: each line tagged ' ', '-' or '+'.
    let mut ops: Vec<(char, &str)> = e[..prefix].iter().map(|l| (' ', *l)).collect();
    let (mut i, mut j) = (0, 0);
    while i < em.len() || j < am.len() {
        if i < em.len() && j < am.len() && em[i] == am[j] {
            ops.push((' ', em[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < em.len() && (j == am.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            // A removal before an addition, as `diff -u` prints a changed line.
            ops.push(('-', em[i]));
            i += 1;
        } else {
            ops.push(('+', am[j]));
            j += 1;
        }
    }
    ops.extend(e[e.len() - suffix..].iter().map(|l| (' ', *l)));
    // Hunks: runs of changes closer than 2 * CONTEXT lines share one.
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    let mut out = String::new();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        while k + 1 < changed.len() && changed[k + 1] <= end + 2 * CONTEXT + 1 {
            k += 1;
            end = changed[k];
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let before = |tag: char| ops[..start].iter().filter(|o| o.0 != tag).count();
        let count = |tag: char| ops[start..end].iter().filter(|o| o.0 != tag).count();
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            before('+') + 1,
            count('+'),
            before('-') + 1,
            count('-')
        ));
        for (tag, line) in &ops[start..end] {
            out.push_str(&format!("{tag} {line}\n"));
        }
        k += 1;
    }
    out
}
