//! Property tests of the view ops: random chains of ops over random base shapes, each
//! checked against a naive n-d array that applies the same op by explicit indexing.
//!
//! After every successful op: the layout's shape equals the naive shape, every element
//! read through the layout equals the naive element, the layout stays inside its
//! storage, and `is_contiguous` agrees with a naive definition (the elements sit at
//! consecutive storage indices in row-major order). Ops that refuse their arguments are
//! skipped (the conformance corpus checks the refusals), but must never panic.

use lazyfuse_ir::Layout;
use proptest::prelude::*;

/// Naive n-d array of values in row-major order.
#[derive(Clone, Debug)]
struct Nd {
    shape: Vec<usize>,
    data: Vec<i64>,
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Every multi-index of `shape`, in row-major order.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    if numel(shape) == 0 {
        return out;
    }
    let mut idx = vec![0; shape.len()];
    loop {
        out.push(idx.clone());
        let mut d = shape.len();
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl Nd {
    fn at(&self, idx: &[usize]) -> i64 {
        let mut flat = 0;
        for (i, &s) in idx.iter().zip(&self.shape) {
            assert!(*i < s, "naive index {idx:?} out of {:?}", self.shape);
            flat = flat * s + i;
        }
        self.data[flat]
    }

    /// The array of `shape` whose element at `i` is `self.at(f(i))`.
    fn gather(&self, shape: Vec<usize>, f: impl Fn(&[usize]) -> Vec<usize>) -> Nd {
        let data = indices(&shape).iter().map(|i| self.at(&f(i))).collect();
        Nd { shape, data }
    }

    fn reshaped(&self, shape: Vec<usize>) -> Nd {
        assert_eq!(numel(&shape), self.data.len());
        Nd {
            shape,
            data: self.data.clone(),
        }
    }
}

/// A tensor of the model: a layout over a storage, with its naive twin.
#[derive(Clone, Debug)]
struct State {
    layout: Layout,
    storage: Vec<i64>,
    naive: Nd,
}

impl State {
    fn read(&self) -> Vec<i64> {
        self.layout.offsets().map(|o| self.storage[o]).collect()
    }

    fn copy(&self, shape: Vec<usize>) -> State {
        let values = self.read();
        State {
            layout: Layout::contiguous(&shape),
            storage: values.clone(),
            naive: Nd {
                shape,
                data: values,
            },
        }
    }
}

/// A dim argument for an `n`-dim tensor: mostly valid, sometimes negative, rarely out
/// of range (to exercise the refusals without panicking).
fn dim(seed: i64, n: usize) -> isize {
    let m = n.max(1) as i64;
    (seed.rem_euclid(2 * m + 1) - m) as isize
}

fn wrap(d: isize, n: usize) -> usize {
    if d < 0 {
        (d + n as isize) as usize
    } else {
        d as usize
    }
}

/// A pseudo-random permutation of `0..n` derived from `seed`.
fn perm(seed: i64, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    let mut s = seed as u64 ^ 0x9e37_79b9_7f4a_7c15;
    for i in (1..n).rev() {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        p.swap(i, (s >> 33) as usize % (i + 1));
    }
    p
}

/// A shape with `numel` elements (when `numel > 0`) built from `seed`: the prime
/// factors spread over a few dims, with size-1 dims sprinkled in and maybe one `-1`.
fn target_shape(seed: i64, numel: usize) -> Vec<isize> {
    let s = seed.unsigned_abs();
    let ndim = (s % 4) as usize + 1;
    let mut shape = vec![1isize; ndim];
    if numel == 0 {
        let zero_at = (s / 4) as usize % ndim;
        for (i, d) in shape.iter_mut().enumerate() {
            *d = if i == zero_at {
                0
            } else {
                ((s >> (i + 3)) % 3) as isize
            };
        }
        return shape;
    }
    let mut rest = numel;
    let mut k = s / 16;
    let mut p = 2;
    while rest > 1 {
        while rest.is_multiple_of(p) {
            shape[(k % ndim as u64) as usize] *= p as isize;
            k = k / 3 + 7;
            rest /= p;
        }
        p += 1;
    }
    if (s >> 20).is_multiple_of(3) {
        let i = (s >> 24) as usize % ndim;
        shape[i] = -1;
    }
    shape
}

/// The naive shape a `-1`-bearing request resolves to.
fn resolve(shape: &[isize], numel: usize) -> Vec<usize> {
    let known: usize = shape
        .iter()
        .filter(|&&s| s >= 0)
        .map(|&s| s as usize)
        .product();
    shape
        .iter()
        .map(|&s| if s == -1 { numel / known } else { s as usize })
        .collect()
}

/// Applies op number `kind` with seeds `a, b, c` to `st`; `None` when the layout op
/// refuses (the naive twin is then not consulted). Panics on any disagreement.
fn step(st: &State, kind: u8, a: i64, b: i64, c: i64) -> Option<State> {
    let l = &st.layout;
    let n = l.ndim();
    let nd = &st.naive;
    let same = |layout: Layout, naive: Nd| State {
        layout,
        storage: st.storage.clone(),
        naive,
    };
    let out = match kind {
        0 | 1 => {
            let shape = target_shape(a, l.numel());
            let view = l.view(&shape);
            let reshape = l.reshape(&shape);
            // view succeeds exactly where reshape gives a view, with the same result.
            match (&view, &reshape) {
                (Ok(v), Ok(Some(r))) => assert_eq!(v, r),
                (Err(_), Ok(None)) | (Err(_), Err(_)) => {}
                other => panic!("view/reshape disagree on {l} to {shape:?}: {other:?}"),
            }
            if l.is_contiguous() {
                assert!(view.is_ok(), "view of contiguous {l} to {shape:?} failed");
            }
            let want = resolve(&shape, l.numel());
            if kind == 0 {
                same(view.ok()?, nd.reshaped(want))
            } else {
                match reshape.ok()? {
                    Some(v) => same(v, nd.reshaped(want)),
                    None => st.copy(want),
                }
            }
        }
        2 => {
            let (d0, d1) = (dim(a, n), dim(b, n));
            let out = l.transpose(d0, d1).ok()?;
            if n == 0 {
                same(out, nd.clone())
            } else {
                let (x, y) = (wrap(d0, n), wrap(d1, n));
                let mut shape = nd.shape.clone();
                shape.swap(x, y);
                same(
                    out,
                    nd.gather(shape, |i| {
                        let mut j = i.to_vec();
                        j.swap(x, y);
                        j
                    }),
                )
            }
        }
        3 => {
            let p = perm(a, n);
            let dims: Vec<isize> = p
                .iter()
                .enumerate()
                .map(|(k, &d)| {
                    if (b >> k) & 1 == 1 {
                        d as isize - n as isize
                    } else {
                        d as isize
                    }
                })
                .collect();
            let out = l.permute(&dims).ok()?;
            let shape = p.iter().map(|&d| nd.shape[d]).collect();
            same(
                out,
                nd.gather(shape, |i| {
                    let mut j = vec![0; n];
                    for (k, &d) in p.iter().enumerate() {
                        j[d] = i[k];
                    }
                    j
                }),
            )
        }
        4 => {
            let lead = (a.rem_euclid(3)) as usize;
            let mut shape: Vec<isize> = (0..lead).map(|k| ((b >> (2 * k)) & 3) as isize).collect();
            for (k, &s) in nd.shape.iter().enumerate() {
                let r = (c >> (2 * k)) & 3;
                shape.push(if s == 1 && r > 0 {
                    r as isize + 1
                } else if r == 0 {
                    -1
                } else {
                    s as isize
                });
            }
            let out = l.expand(&shape).ok()?;
            let want: Vec<usize> = shape
                .iter()
                .enumerate()
                .map(|(k, &s)| {
                    if s == -1 {
                        nd.shape[k - lead]
                    } else {
                        s as usize
                    }
                })
                .collect();
            same(
                out,
                nd.gather(want, |i| {
                    (0..n)
                        .map(|k| if nd.shape[k] == 1 { 0 } else { i[k + lead] })
                        .collect()
                }),
            )
        }
        5 | 6 => {
            // narrow (5) or a stepped slice (6)
            let d = dim(a, n);
            let size = if n == 0 {
                0
            } else {
                l.shape[wrap(d, n).min(n - 1)] as i64
            };
            let start = b.rem_euclid(2 * size + 3) - size - 1;
            let (out, x, first, len, step) = if kind == 5 {
                let length = c.rem_euclid(size + 2) as usize;
                let out = l.narrow(d, start as isize, length).ok()?;
                let s0 = if start < 0 { start + size } else { start } as usize;
                (out, wrap(d, n), s0, length, 1)
            } else {
                let stop = (c >> 8).rem_euclid(2 * size + 3) - size - 1;
                let step = (c.rem_euclid(3) + 1) as usize;
                let (start_o, stop_o) = (
                    if (c >> 4) & 1 == 1 {
                        None
                    } else {
                        Some(start as isize)
                    },
                    if (c >> 5) & 1 == 1 {
                        None
                    } else {
                        Some(stop as isize)
                    },
                );
                let out = l.slice(d, start_o, stop_o, step).ok()?;
                // Python's slice.indices, computed independently.
                let norm = |v: i64| {
                    if v < 0 {
                        (v + size).max(0)
                    } else {
                        v.min(size)
                    }
                };
                let s0 = start_o.map_or(0, |v| norm(v as i64));
                let s1 = stop_o.map_or(size, |v| norm(v as i64)).max(s0);
                let len = ((s1 - s0) as usize).div_ceil(step);
                (out, wrap(d, n), s0 as usize, len, step)
            };
            let mut shape = nd.shape.clone();
            shape[x] = len;
            same(
                out,
                nd.gather(shape, |i| {
                    let mut j = i.to_vec();
                    j[x] = first + i[x] * step;
                    j
                }),
            )
        }
        7 => {
            let d = dim(a, n);
            let size = if n == 0 {
                0
            } else {
                l.shape[wrap(d, n).min(n - 1)] as i64
            };
            let index = b.rem_euclid(2 * size + 1) - size;
            let out = l.select(d, index as isize).ok()?;
            let x = wrap(d, n);
            let ix = if index < 0 { index + size } else { index } as usize;
            let mut shape = nd.shape.clone();
            shape.remove(x);
            same(
                out,
                nd.gather(shape, |i| {
                    let mut j = i.to_vec();
                    j.insert(x, ix);
                    j
                }),
            )
        }
        8 => {
            let out = if a % 2 == 0 {
                l.squeeze()
            } else {
                l.squeeze_dim(dim(b, n)).ok()?
            };
            let shape: Vec<usize> = if a % 2 == 0 {
                nd.shape.iter().copied().filter(|&s| s != 1).collect()
            } else {
                let mut s = nd.shape.clone();
                let x = wrap(dim(b, n), n);
                if n > 0 && s[x] == 1 {
                    s.remove(x);
                }
                s
            };
            same(out, nd.reshaped(shape))
        }
        9 => {
            let d = dim(a, n + 1);
            let out = l.unsqueeze(d).ok()?;
            let mut shape = nd.shape.clone();
            shape.insert(wrap(d, n + 1), 1);
            same(out, nd.reshaped(shape))
        }
        10 => {
            let (d1, d2) = (dim(a, n), dim(b, n));
            let off = (c % 4) as isize;
            let out = l.diagonal(off, d1, d2).ok()?;
            let (x, y) = (wrap(d1, n), wrap(d2, n));
            let (r0, c0) = if off >= 0 {
                (0, off as usize)
            } else {
                (off.unsigned_abs(), 0)
            };
            let len = nd.shape[x]
                .saturating_sub(r0)
                .min(nd.shape[y].saturating_sub(c0));
            let mut shape: Vec<usize> = (0..n)
                .filter(|&k| k != x && k != y)
                .map(|k| nd.shape[k])
                .collect();
            shape.push(len);
            same(
                out,
                nd.gather(shape, |i| {
                    let k = i[i.len() - 1];
                    let mut rest = i[..i.len() - 1].iter();
                    (0..n)
                        .map(|d| {
                            if d == x {
                                k + r0
                            } else if d == y {
                                k + c0
                            } else {
                                *rest.next().unwrap()
                            }
                        })
                        .collect()
                }),
            )
        }
        11 => {
            // as_strided with a geometry that may or may not fit the storage.
            let k = (a.rem_euclid(3) + 1) as usize;
            let size: Vec<usize> = (0..k).map(|i| ((b >> (2 * i)) & 3) as usize).collect();
            let stride: Vec<isize> = (0..k).map(|i| ((c >> (2 * i)) & 3) as isize).collect();
            let offset = ((a >> 4) & 3) as usize;
            let out = l
                .as_strided(&size, &stride, offset, st.storage.len())
                .ok()?;
            let storage = &st.storage;
            let naive = Nd {
                shape: size.clone(),
                data: indices(&size)
                    .iter()
                    .map(|i| {
                        let pos: isize = i.iter().zip(&stride).map(|(&x, &s)| x as isize * s).sum();
                        storage[offset + pos as usize]
                    })
                    .collect(),
            };
            same(out, naive)
        }
        12 => {
            let d = dim(a, n);
            let size = (b.rem_euclid(4)) as usize;
            let step = (c.rem_euclid(3) + 1) as usize;
            let out = l.unfold(d, size, step).ok()?;
            if n == 0 {
                same(out, nd.gather(vec![size], |_| vec![]))
            } else {
                let x = wrap(d, n);
                let mut shape = nd.shape.clone();
                shape[x] = (shape[x] - size) / step + 1;
                shape.push(size);
                same(
                    out,
                    nd.gather(shape, |i| {
                        let mut j = i[..n].to_vec();
                        j[x] = i[x] * step + i[n];
                        j
                    }),
                )
            }
        }
        13 => {
            let (s, d) = (dim(a, n), dim(b, n));
            let out = l.movedim(s, d).ok()?;
            if n == 0 {
                same(out, nd.clone())
            } else {
                let (s, d) = (wrap(s, n), wrap(d, n));
                let mut order: Vec<usize> = (0..n).filter(|&k| k != s).collect();
                order.insert(d, s);
                let shape = order.iter().map(|&k| nd.shape[k]).collect();
                same(
                    out,
                    nd.gather(shape, |i| {
                        let mut j = vec![0; n];
                        for (k, &o) in order.iter().enumerate() {
                            j[o] = i[k];
                        }
                        j
                    }),
                )
            }
        }
        14 => {
            let out = if a % 2 == 0 { l.t() } else { l.mt() }.ok()?;
            if n < 2 {
                same(out, nd.clone())
            } else {
                let mut shape = nd.shape.clone();
                shape.swap(n - 2, n - 1);
                same(
                    out,
                    nd.gather(shape, |i| {
                        let mut j = i.to_vec();
                        j.swap(n - 2, n - 1);
                        j
                    }),
                )
            }
        }
        15 => {
            let (s, e) = (dim(a, n), dim(b, n));
            let flat = l.flatten(s, e).ok()?;
            let want = if n == 0 {
                vec![1]
            } else {
                let (s, e) = (wrap(s, n), wrap(e, n));
                let mut w = nd.shape[..s].to_vec();
                w.push(nd.shape[s..=e].iter().product());
                w.extend_from_slice(&nd.shape[e + 1..]);
                w
            };
            assert_eq!(l.flatten_shape(s, e).unwrap(), want);
            match flat {
                Some(v) => same(v, nd.reshaped(want)),
                None => st.copy(want),
            }
        }
        16 => {
            let d = dim(a, n);
            let size = if n == 0 {
                1
            } else {
                l.shape[wrap(d, n).min(n - 1)]
            };
            let sizes = target_shape(b, size);
            let out = l.unflatten(d, &sizes).ok()?;
            let x = wrap(d, n);
            let mut shape = nd.shape[..x].to_vec();
            shape.extend(resolve(&sizes, size));
            shape.extend_from_slice(&nd.shape[x + 1..]);
            same(out, nd.reshaped(shape))
        }
        17..=20 => {
            // split by size (17), split by sizes (18), chunk (19), unbind (20)
            let d = dim(a, n);
            let size = if n == 0 {
                0
            } else {
                l.shape[wrap(d, n).min(n - 1)]
            };
            let (pieces, bounds): (Vec<Layout>, Vec<(usize, usize, bool)>) = match kind {
                17 | 19 => {
                    let k = (b.rem_euclid(4) + 1) as usize;
                    let piece = if kind == 17 { k } else { size.div_ceil(k) };
                    let pieces = if kind == 17 {
                        l.split(k, d)
                    } else {
                        l.chunk(k, d)
                    }
                    .ok()?;
                    let count = if size == 0 {
                        if kind == 19 {
                            k
                        } else {
                            1
                        }
                    } else {
                        size.div_ceil(piece)
                    };
                    let bounds = (0..count)
                        .map(|i| ((i * piece).min(size), ((i + 1) * piece).min(size), false))
                        .collect();
                    (pieces, bounds)
                }
                18 => {
                    let mut sizes = Vec::new();
                    let mut left = size;
                    let mut s = b.unsigned_abs();
                    while left > 0 {
                        let p = ((s % 3) as usize).min(left);
                        sizes.push(p);
                        left -= p;
                        s = s / 3 + 1;
                    }
                    if c % 3 == 0 {
                        sizes.push(0);
                    }
                    let pieces = l.split_sizes(&sizes, d).ok()?;
                    let mut start = 0;
                    let bounds = sizes
                        .iter()
                        .map(|&p| {
                            start += p;
                            (start - p, start, false)
                        })
                        .collect();
                    (pieces, bounds)
                }
                _ => {
                    let pieces = l.unbind(d).ok()?;
                    (pieces, (0..size).map(|i| (i, i + 1, true)).collect())
                }
            };
            assert_eq!(
                pieces.len(),
                bounds.len(),
                "piece count of op {kind} on {l}"
            );
            let i = c.unsigned_abs() as usize % pieces.len().max(1);
            let layout = pieces.get(i)?.clone();
            let (lo, hi, drop) = bounds[i];
            let x = wrap(d, n);
            let mut shape = nd.shape.clone();
            shape[x] = hi - lo;
            let mut naive = nd.gather(shape.clone(), |i| {
                let mut j = i.to_vec();
                j[x] += lo;
                j
            });
            if drop {
                shape.remove(x);
                naive = naive.reshaped(shape);
            }
            same(layout, naive)
        }
        _ => {
            if l.is_contiguous() {
                st.clone()
            } else {
                st.copy(l.shape.to_vec())
            }
        }
    };
    Some(out)
}

/// The invariants every state must satisfy.
fn check(st: &State, what: &str) {
    let l = &st.layout;
    assert_eq!(l.shape[..], st.naive.shape[..], "{what}: shape of {l}");
    assert_eq!(l.strides.len(), l.ndim(), "{what}: stride count of {l}");
    assert!(
        l.required_storage() <= st.storage.len(),
        "{what}: {l} needs {} elements of a {}-element storage",
        l.required_storage(),
        st.storage.len()
    );
    assert_eq!(st.read(), st.naive.data, "{what}: values of {l}");
    let offsets: Vec<usize> = l.offsets().collect();
    let naive_contiguous = offsets.iter().enumerate().all(|(i, &o)| o == l.offset + i);
    assert_eq!(
        l.is_contiguous(),
        naive_contiguous,
        "{what}: contiguity of {l}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn view_chains_agree_with_naive_indexing(
        base in prop::collection::vec(0usize..5, 0..5),
        ops in prop::collection::vec((0u8..22, any::<i64>(), any::<i64>(), any::<i64>()), 1..7),
    ) {
        let n = numel(&base);
        let data: Vec<i64> = (0..n as i64).collect();
        let mut st = State {
            layout: Layout::contiguous(&base),
            storage: data.clone(),
            naive: Nd { shape: base.clone(), data },
        };
        check(&st, "base");
        for (k, &(kind, a, b, c)) in ops.iter().enumerate() {
            if let Some(next) = step(&st, kind, a, b, c) {
                st = next;
                check(&st, &format!("op {k} (kind {kind}, {a}, {b}, {c})"));
            }
        }
    }
}
