//! A chain of views composed into one strided read of the base buffer: a strided
//! view (a convolution's windows), then reshapes and permutes of its row-major
//! value (the windows as the weight gradient's `[C·kh·kw, N·OH·OW]` operand).
//! The composed form lists dims in the chain's row-major order, each with its
//! stride in the base buffer: what an [`ExternView`](crate::kernel::ExternView)
//! with `dims` describes.

use crate::layout::Layout;

/// Elements in the row-major order of `dims`, element `i` at `offset + Σ
/// strides[d] · i_d` of the base buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct StridedRead {
    pub(super) dims: Vec<usize>,
    pub(super) strides: Vec<usize>,
    pub(super) offset: usize,
}

impl StridedRead {
    /// The read of a view `l` of the base buffer (`None` with a negative stride
    /// or an empty dim).
    pub(super) fn of(l: &Layout) -> Option<StridedRead> {
        if l.shape.contains(&0) {
            return None;
        }
        Some(StridedRead {
            dims: l.shape.to_vec(),
            strides: l
                .strides
                .iter()
                .map(|&s| usize::try_from(s).ok())
                .collect::<Option<_>>()?,
            offset: l.offset,
        })
    }

    /// The row-major step of each dim in the value's element order.
    fn weights(&self) -> Vec<usize> {
        let mut w = vec![1usize; self.dims.len()];
        for d in (0..self.dims.len().saturating_sub(1)).rev() {
            w[d] = w[d + 1] * self.dims[d + 1];
        }
        w
    }

    /// Splits a dim so that one starts at row-major step `w` (or `w` is the
    /// whole value's size); `None` where `w` falls inside a dim it does not
    /// divide.
    fn split_at(&mut self, w: usize) -> Option<()> {
        let total: usize = self.dims.iter().product();
        if w == total {
            return Some(());
        }
        for (d, wd) in self.weights().into_iter().enumerate() {
            if wd == w {
                return Some(());
            }
            if wd < w && w < wd * self.dims[d] {
                let f = w / wd;
                if !w.is_multiple_of(wd) || !self.dims[d].is_multiple_of(f) {
                    return None;
                }
                let (size, stride) = (self.dims[d], self.strides[d]);
                self.dims.splice(d..=d, [size / f, f]);
                self.strides.splice(d..=d, [stride * f, stride]);
                return Some(());
            }
        }
        None
    }

    /// The read of view `l` of this value (its row-major elements): each of
    /// `l`'s dims a run of this value's dims (split where it must be), every dim
    /// at most one run's; `None` for an offset view, a broadcast, or dims that
    /// cut across this value's.
    pub(super) fn then(&self, l: &Layout) -> Option<StridedRead> {
        if l.offset != 0 || l.shape.contains(&0) {
            return None;
        }
        let mut base = self.clone();
        let mut moving = Vec::new();
        for (&n, &t) in l.shape.iter().zip(&l.strides) {
            if n == 1 {
                continue;
            }
            let t = usize::try_from(t).ok().filter(|&t| t > 0)?;
            base.split_at(t)?;
            base.split_at(t.checked_mul(n)?)?;
            moving.push((n, t));
        }
        let weights = base.weights();
        let mut used = vec![false; base.dims.len()];
        let mut out = StridedRead {
            dims: Vec::new(),
            strides: Vec::new(),
            offset: base.offset,
        };
        for (n, t) in moving {
            let mut size = 1usize;
            for d in 0..base.dims.len() {
                if base.dims[d] > 1 && weights[d] >= t && weights[d] < t * n {
                    if used[d] {
                        return None;
                    }
                    used[d] = true;
                    size *= base.dims[d];
                    out.dims.push(base.dims[d]);
                    out.strides.push(base.strides[d]);
                }
            }
            if size != n {
                return None;
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reshapes_and_permutes_compose_into_runs_of_dims() {
        // windows [N=2, C=3, kh=2, kw=2, OH=4, OW=4] of a [2, 3, 5, 5] image
        let w = StridedRead::of(&Layout {
            shape: vec![2, 3, 2, 2, 4, 4].into(),
            strides: vec![75, 25, 5, 1, 5, 1].into(),
            offset: 0,
        })
        .unwrap();
        // [N, C·kh·kw, P] (a reshape), then permuted to [C·kh·kw, N, P], then
        // reshaped to [C·kh·kw, N·P]
        let r1 = w.then(&Layout::contiguous(&[2, 12, 16])).unwrap();
        assert_eq!(r1, w);
        let perm = Layout {
            shape: vec![12, 2, 16].into(),
            strides: vec![16, 192, 1].into(),
            offset: 0,
        };
        let r2 = r1.then(&perm).unwrap();
        assert_eq!(r2.dims, vec![3, 2, 2, 2, 4, 4]);
        assert_eq!(r2.strides, vec![25, 5, 1, 75, 5, 1]);
        // a reshape that merges N with OH·OW of the permuted value: dims stay
        let r3 = r2.then(&Layout::contiguous(&[12, 32])).unwrap();
        assert_eq!(r3, r2);
        // a split dim: [2, 12, 16] read as [2, 12, 4, 4] splits P again
        let split = r1.then(&Layout::contiguous(&[2, 12, 2, 8])).unwrap();
        assert_eq!(split.dims, vec![2, 3, 2, 2, 2, 2, 4]);
        assert_eq!(split.strides, vec![75, 25, 5, 1, 10, 5, 1]);
    }

    #[test]
    fn offsets_broadcasts_and_cut_dims_do_not_compose() {
        let w = StridedRead::of(&Layout::contiguous(&[4, 6])).unwrap();
        let offset = Layout {
            shape: vec![2, 6].into(),
            strides: vec![6, 1].into(),
            offset: 6,
        };
        assert!(w.then(&offset).is_none());
        let broadcast = Layout {
            shape: vec![3, 24].into(),
            strides: vec![0, 1].into(),
            offset: 0,
        };
        assert!(w.then(&broadcast).is_none());
        // a step of 4 inside a dim of 6 it does not divide
        let cut = Layout {
            shape: vec![6, 4].into(),
            strides: vec![1, 6].into(),
            offset: 0,
        };
        assert_eq!(w.then(&cut).unwrap().dims, vec![6, 4]);
        let odd = Layout {
            shape: vec![4].into(),
            strides: vec![5].into(),
            offset: 0,
        };
        assert!(w.then(&odd).is_none());
    }
}
