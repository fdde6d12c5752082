//! Indexing and shaping ops: `gather`, `index_select`, `take`, `scatter` (with
//! `scatter_add` and `scatter_reduce`), `masked_select`, `tril`/`triu`, `flip`,
//! `roll`, `repeat`, `tile` and constant `pad`.
//!
//! How each is recorded, for the compiler that lowers the graph later:
//! - loads and stores whose positions depend on data are nodes with an explicit
//!   `int64` index input (`gather`, `index_select`, `take`, `scatter`); `int32`
//!   indices are cast to `int64` by a `cast` node so that the index type is uniform.
//!   Index values are checked when the graph runs (an `Err` from `realize`/`to_vec`).
//! - `masked_select` has a data-dependent shape: it realizes its (broadcast) mask
//!   while building, turns it into an `int64` position list and records a `take`.
//! - pure data movement with a static index map is built from existing nodes where
//!   that reads naturally: `roll` is a `cat` of two `narrow` views per dim, `repeat`
//!   and `tile` one stride-0 `view` and a reshape, `pad` a `write_view` of the kept
//!   input into a `full` node, `tril`/`triu` a `where` over a mask built from two
//!   `arange` nodes. `flip` is its own node: layouts have no negative strides.
//!
//! The dtype tables and shape checks live in `lazyfuse_ir::indexing`.

use crate::error::Result;
use crate::ops::elementwise::to_isize;
use crate::store::{with_store, Store};
use crate::tensor::{check_fill_value, Tensor};
use lazyfuse_ir::broadcast::broadcast_shapes;
use lazyfuse_ir::indexing::{self as rules, PadDim};
use lazyfuse_ir::shape::{checked_numel, fmt_shape, numel, wrap_dim};
use lazyfuse_ir::{BinaryOp, DType, Error as IrError, Layout, NodeId, Op, Scalar, ScatterReduce};

/// The source of a scatter: a tensor, or a host scalar broadcast to the index.
enum Source<'a> {
    Tensor(&'a Tensor),
    Value(Scalar),
}

/// A zero-dim tensor counts as one dim of size 1 in ATen's scatter/gather checks.
fn nonempty(shape: &[usize]) -> Vec<usize> {
    if shape.is_empty() {
        vec![1]
    } else {
        shape.to_vec()
    }
}

/// PyTorch's `get_overlap_status(a, b) != No` where it can tell: the tensors share a
/// storage and the memory ranges of two dense layouts intersect.
fn overlaps(a: &Tensor, b: &Tensor) -> bool {
    if !a.shares_storage(b) || a.numel() == 0 || b.numel() == 0 {
        return false;
    }
    let (la, lb) = (a.strided_layout(), b.strided_layout());
    if !la.is_non_overlapping_and_dense() || !lb.is_non_overlapping_and_dense() {
        return false; // "too hard" for PyTorch too: it lets the op run
    }
    la.offset < lb.offset + lb.numel() && lb.offset < la.offset + la.numel()
}

/// The index read as an `int64` node of its own shape.
fn index_node(store: &mut Store, index: &Tensor) -> NodeId {
    let read = index.node(store);
    store.cast_node(read, DType::I64)
}

impl Tensor {
    /// A contiguous copy in a new storage (what PyTorch's copying ops return when
    /// they have nothing to move).
    pub(crate) fn fresh_copy(&self) -> Tensor {
        with_store(|s| {
            let read = self.node(s);
            Tensor::from_node(s, read)
        })
    }

    /// Gathers values along `dim`: `out[i][j] = self[index[i][j]][j]` for `dim = 0`
    /// (and likewise for other dims). `index` is `int64` or `int32`, has this tensor's
    /// number of dims and is no larger in the other dims; the output has its shape.
    /// An index outside `[0, size)` is an error when the values are computed.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let i = Tensor::from_vec(vec![0i64, 0, 1, 0], &[2, 2])?;
    /// assert_eq!(x.gather(1, &i)?.to_vec::<f32>()?, vec![1.0, 1.0, 4.0, 3.0]);
    /// let bad = Tensor::from_vec(vec![5i64], &[1, 1])?;
    /// assert_eq!(
    ///     x.gather(0, &bad)?.to_vec::<f32>().unwrap_err().to_string(),
    ///     "index 5 is out of bounds for dimension 0 with size 2"
    /// );
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn gather(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let axis = wrap_dim(dim, self.ndim())?;
        Tensor::same_device("gather", &[self, index])?;
        if index.numel() == 0 {
            // PyTorch checks nothing else for an empty index.
            return Ok(Tensor::constant_on(
                &index.shape(),
                Scalar::Int(0),
                self.dtype(),
                self.device(),
            ));
        }
        rules::scatter_gather_index_dtype("gather", index.dtype(), index.numel())?;
        rules::gather_shape(&self.shape(), axis, &index.shape())?;
        let strides = index.strides();
        let expanded = axis == 0
            && self.ndim() > 0
            && strides.first() == Some(&1)
            && strides[1..].iter().all(|&st| st == 0);
        rules::gather_dtype(self.dtype(), expanded)?;
        with_store(|s| {
            let x = self.node(s);
            let i = index_node(s, index);
            let node = s.add(Op::Gather { axis }, self.dtype(), index.shape(), &[x, i]);
            Ok(Tensor::from_node(s, node))
        })
    }

    /// The slices of `dim` named by the vector `index` (`int64` or `int32`, or a
    /// zero-dim index), in its order: the output has this shape with `dim` replaced by
    /// the index length. Every dtype works.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2, 3])?;
    /// let i = Tensor::from_vec(vec![2i64, 0, 2], &[3])?;
    /// let y = x.index_select(-1, &i)?;
    /// assert_eq!((y.shape(), y.to_vec::<i32>()?), (vec![2, 3], vec![3, 1, 3, 6, 4, 6]));
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn index_select(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let axis = wrap_dim(dim, self.ndim())?;
        Tensor::same_device("index_select", &[self, index])?;
        let bad = |m: String| -> Result<Tensor> { Err(IrError::invalid("index_select", m).into()) };
        if !matches!(index.dtype(), DType::I32 | DType::I64) {
            return bad("index_select(): Expected dtype int32 or int64 for index".into());
        }
        if index.ndim() > 1 {
            return bad("index_select(): Index is supposed to be a vector".into());
        }
        let k = index.numel();
        let mut shape = self.shape();
        if shape.is_empty() {
            if k != 1 {
                return bad(format!(
                    "index_select(): Index to scalar can have only 1 value, got {k} value(s)"
                ));
            }
        } else {
            if shape[axis] == 0 && k > 0 {
                return bad("index_select(): self indexing axis dim should be positive".into());
            }
            shape[axis] = k;
        }
        with_store(|s| {
            let x = self.node(s);
            let read = index_node(s, index);
            let i = s.view_node(read, &Layout::contiguous(&[k]));
            let node = s.add(Op::IndexSelect { axis }, self.dtype(), shape, &[x, i]);
            Ok(Tensor::from_node(s, node))
        })
    }

    /// The elements at the `int64` positions `index` of this tensor read as a flat
    /// row-major vector; negative positions count from the end. The output has the
    /// index's shape.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![10i64, 20, 30, 40], &[2, 2])?;
    /// let i = Tensor::from_vec(vec![-1i64, 0], &[2])?;
    /// assert_eq!(x.t()?.take(&i)?.to_vec::<i64>()?, vec![40, 10]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn take(&self, index: &Tensor) -> Result<Tensor> {
        Tensor::same_device("take", &[self, index])?;
        if index.dtype() != DType::I64 {
            return Err(IrError::invalid(
                "take",
                format!(
                    "take(): Expected a long tensor for index, but got {}",
                    index.dtype().torch_name()
                ),
            )
            .into());
        }
        if self.numel() == 0 && index.numel() > 0 {
            return Err(
                IrError::invalid("take", "take(): tried to take from an empty tensor").into(),
            );
        }
        if index.numel() > 0 {
            // PyTorch runs no kernel (and refuses no dtype) for an empty result.
            rules::take_dtype(self.dtype())?;
        }
        with_store(|s| {
            let x = self.node(s);
            let i = index.node(s);
            let node = s.add(Op::Take, self.dtype(), index.shape(), &[x, i]);
            Ok(Tensor::from_node(s, node))
        })
    }

    /// The elements where the bool `mask` is true, as a vector (this tensor and the
    /// mask broadcast). The result's length depends on the mask's values, so this
    /// computes the mask now (a realize); the values are gathered lazily.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let m = Tensor::from_vec(vec![true, false], &[2])?;
    /// assert_eq!(x.masked_select(&m)?.to_vec::<f32>()?, vec![1.0, 3.0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        Tensor::same_device("masked_select", &[self, mask])?;
        if mask.dtype() != DType::Bool {
            return Err(IrError::invalid(
                "masked_select",
                "masked_select: expected BoolTensor for mask",
            )
            .into());
        }
        // PyTorch broadcasts the mask first (its name in the message is "tensor a").
        let shape = broadcast_shapes(&mask.shape(), &self.shape())?;
        let truth = mask.expand(&to_isize(&shape))?.to_vec::<bool>()?;
        let positions: Vec<i64> = truth
            .iter()
            .enumerate()
            .filter(|(_, &t)| t)
            .map(|(p, _)| p as i64)
            .collect();
        let k = positions.len();
        if k > 0 {
            // no kernel (and no dtype refusal) for an empty result
            rules::masked_select_dtype(self.dtype())?;
        }
        // The positions were found on the host: the index goes to this tensor's device.
        let index = Tensor::from_vec_on(positions, &[k], self.device())?;
        with_store(|s| {
            let x = self.node_as(s, self.dtype(), &shape)?;
            let i = index.node(s);
            let node = s.add(Op::Take, self.dtype(), vec![k], &[x, i]);
            Ok(Tensor::from_node(s, node))
        })
    }

    /// The node of `scatter`/`scatter_add`/`scatter_reduce` of this tensor, after
    /// PyTorch's checks, in PyTorch's order.
    fn scatter_node(
        &self,
        s: &mut Store,
        dim: isize,
        index: &Tensor,
        src: Source,
        reduce: Option<ScatterReduce>,
        include_self: bool,
    ) -> Result<NodeId> {
        let axis = wrap_dim(dim, self.ndim())?;
        let dtype = self.dtype();
        rules::scatter_gather_index_dtype("scatter", index.dtype(), index.numel())?;
        let src_shape = match &src {
            Source::Tensor(t) => {
                if t.dtype() != dtype {
                    return Err(IrError::invalid(
                        "scatter",
                        "scatter(): Expected self.dtype to be equal to src.dtype",
                    )
                    .into());
                }
                Some(t.shape())
            }
            Source::Value(v) => {
                check_fill_value(*v, dtype)?;
                None
            }
        };
        let shape = self.shape();
        rules::scatter_shape(&shape, axis, &index.shape(), src_shape.as_deref())?;
        let x = self.node(s);
        if index.numel() == 0 {
            // no kernel runs, so no dtype is refused
            return Ok(x);
        }
        rules::scatter_dtype(
            dtype,
            reduce,
            include_self || reduce.is_none(),
            matches!(src, Source::Value(_)),
        )?;
        let index_shape = index.shape();
        let values = match src {
            Source::Tensor(t) => {
                // Only the index-shaped corner of the source is read.
                let mut layout = t.strided_layout().clone();
                let want = nonempty(&index_shape);
                if layout.shape.is_empty() {
                    layout = layout.view(&[1])?;
                }
                for (d, &size) in want.iter().enumerate() {
                    layout = layout.narrow(d as isize, 0, size)?;
                }
                let read = t.read_through(s, &layout);
                s.view_node(read, &Layout::contiguous(&index_shape))
            }
            Source::Value(v) => {
                let full = s.add(Op::Full(v), dtype, Vec::new(), &[]);
                let layout = Layout::contiguous(&[]).expand(&to_isize(&index_shape))?;
                s.view_node(full, &layout)
            }
        };
        let i = index_node(s, index);
        let op = Op::Scatter {
            axis,
            reduce,
            include_self: include_self || reduce.is_none(),
        };
        Ok(s.add(op, dtype, shape, &[x, i, values]))
    }

    /// The scatter family's device rule: `self`, `index` and a source tensor on one
    /// device.
    fn scatter_same_device(&self, index: &Tensor, src: &Source) -> Result<()> {
        match src {
            Source::Tensor(t) => Tensor::same_device("scatter", &[self, index, t]),
            Source::Value(_) => Tensor::same_device("scatter", &[self, index]),
        }
    }

    fn scatter_out(
        &self,
        dim: isize,
        index: &Tensor,
        src: Source,
        reduce: Option<ScatterReduce>,
        include_self: bool,
    ) -> Result<Tensor> {
        self.scatter_same_device(index, &src)?;
        with_store(|s| {
            let node = self.scatter_node(s, dim, index, src, reduce, include_self)?;
            Ok(Tensor::from_node(s, node))
        })
    }

    fn scatter_in_place(
        &self,
        dim: isize,
        index: &Tensor,
        src: Source,
        reduce: Option<ScatterReduce>,
        include_self: bool,
    ) -> Result<()> {
        self.scatter_same_device(index, &src)?;
        self.check_destination(None)?;
        // ATen's `assert_no_overlap(self, index)` and `(self, src)`: unlike the
        // elementwise in-place ops, even the very same view is refused.
        let src_tensor = match &src {
            Source::Tensor(t) => Some(*t),
            Source::Value(_) => None,
        };
        for other in std::iter::once(index).chain(src_tensor) {
            if overlaps(self, other) {
                return Err(IrError::PartialOverlap.into());
            }
        }
        with_store(|s| {
            let node = self.scatter_node(s, dim, index, src, reduce, include_self)?;
            self.write(s, node);
            Ok(())
        })
    }

    /// A copy of this tensor with `src[i][j]` written at `[index[i][j]][j]` (for
    /// `dim = 0`; likewise for other dims). `src` has this dtype and is at least as
    /// large as `index`; only its index-shaped corner is read. Where several writes
    /// land on one element the last in row-major order wins (PyTorch leaves that
    /// case unspecified).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2, 3], DType::I64);
    /// let i = Tensor::from_vec(vec![2i64, 0], &[1, 2])?;
    /// let src = Tensor::from_vec(vec![7i64, 8, 9], &[1, 3])?;
    /// assert_eq!(x.scatter(1, &i, &src)?.to_vec::<i64>()?, vec![8, 0, 7, 0, 0, 0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn scatter(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        self.scatter_out(dim, index, Source::Tensor(src), None, true)
    }

    /// [`Tensor::scatter`] with every written value equal to `value` (which must fit
    /// this dtype).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[3], DType::Bool);
    /// let i = Tensor::from_vec(vec![1i64], &[1])?;
    /// assert_eq!(x.scatter_value(0, &i, true)?.to_vec::<bool>()?, vec![false, true, false]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn scatter_value(
        &self,
        dim: isize,
        index: &Tensor,
        value: impl Into<Scalar>,
    ) -> Result<Tensor> {
        self.scatter_out(dim, index, Source::Value(value.into()), None, true)
    }

    /// A copy of this tensor with the values of `src` added at the positions `index`
    /// names (duplicates accumulate); `scatter_reduce` with `Sum`, self included.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 1.0], &[2])?;
    /// let i = Tensor::from_vec(vec![1i64, 1, 0], &[3])?;
    /// let src = Tensor::from_vec(vec![2.0f32, 3.0, 4.0], &[3])?;
    /// assert_eq!(x.scatter_add(0, &i, &src)?.to_vec::<f32>()?, vec![5.0, 6.0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn scatter_add(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        self.scatter_out(
            dim,
            index,
            Source::Tensor(src),
            Some(ScatterReduce::Sum),
            true,
        )
    }

    /// A copy of this tensor where each element that `index` names becomes the
    /// reduction of the values of `src` sent to it, and of its old value when
    /// `include_self`. Elements no index names keep their value. `Mean` of integers
    /// rounds toward negative infinity; `Amax`/`Amin` propagate NaN.
    ///
    /// ```
    /// use lazyfuse::{ScatterReduce, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?;
    /// let i = Tensor::from_vec(vec![1i64, 1], &[2])?;
    /// let src = Tensor::from_vec(vec![4.0f32, 5.0], &[2])?;
    /// let m = x.scatter_reduce(0, &i, &src, ScatterReduce::Mean, false)?;
    /// assert_eq!(m.to_vec::<f32>()?, vec![1.0, 4.5, 3.0]);
    /// let p = x.scatter_reduce(0, &i, &src, ScatterReduce::Prod, true)?;
    /// assert_eq!(p.to_vec::<f32>()?, vec![1.0, 40.0, 3.0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn scatter_reduce(
        &self,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
        reduce: ScatterReduce,
        include_self: bool,
    ) -> Result<Tensor> {
        self.scatter_out(dim, index, Source::Tensor(src), Some(reduce), include_self)
    }

    /// [`Tensor::scatter`] in place; the write reaches every view of the storage.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2, 2], DType::F32);
    /// let i = Tensor::from_vec(vec![1i64], &[1, 1])?;
    /// x.t()?.scatter_(0, &i, &Tensor::ones(&[1, 1], DType::F32))?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.0, 1.0, 0.0, 0.0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn scatter_(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<()> {
        self.scatter_in_place(dim, index, Source::Tensor(src), None, true)
    }

    /// [`Tensor::scatter_value`] in place.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[3], DType::I32);
    /// x.scatter_value_(0, &Tensor::from_vec(vec![0i64, 2], &[2])?, 5)?;
    /// assert_eq!(x.to_vec::<i32>()?, vec![5, 0, 5]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn scatter_value_(
        &self,
        dim: isize,
        index: &Tensor,
        value: impl Into<Scalar>,
    ) -> Result<()> {
        self.scatter_in_place(dim, index, Source::Value(value.into()), None, true)
    }

    /// [`Tensor::scatter_add`] in place.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2], DType::I64);
    /// let i = Tensor::from_vec(vec![0i64, 0, 0], &[3])?;
    /// x.scatter_add_(0, &i, &Tensor::ones(&[3], DType::I64))?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![3, 0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn scatter_add_(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<()> {
        self.scatter_in_place(
            dim,
            index,
            Source::Tensor(src),
            Some(ScatterReduce::Sum),
            true,
        )
    }

    /// [`Tensor::scatter_reduce`] in place.
    ///
    /// ```
    /// use lazyfuse::{ScatterReduce, Tensor};
    /// let x = Tensor::from_vec(vec![5i32, 5], &[2])?;
    /// let i = Tensor::from_vec(vec![1i64, 1], &[2])?;
    /// x.scatter_reduce_(0, &i, &Tensor::from_vec(vec![9i32, 7], &[2])?, ScatterReduce::Amin, false)?;
    /// assert_eq!(x.to_vec::<i32>()?, vec![5, 7]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn scatter_reduce_(
        &self,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
        reduce: ScatterReduce,
        include_self: bool,
    ) -> Result<()> {
        self.scatter_in_place(dim, index, Source::Tensor(src), Some(reduce), include_self)
    }

    /// The triangle node: this tensor where `col - row` passes the comparison with
    /// `diagonal` (over the last two dims), zero elsewhere.
    fn triangle_node(&self, s: &mut Store, diagonal: i64, upper: bool) -> Result<NodeId> {
        let name = if upper { "triu" } else { "tril" };
        let shape = self.shape();
        if shape.len() < 2 {
            return Err(IrError::invalid(
                name,
                format!("{name}: input tensor must have at least 2 dimensions"),
            )
            .into());
        }
        if self.numel() > 0 {
            // no kernel (and no dtype refusal) for an empty tensor
            rules::triangle_dtype(self.dtype(), upper)?;
        }
        let (r, c) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let arange = |s: &mut Store, n: usize| {
            s.add(
                Op::Arange {
                    start: 0.0,
                    step: 1.0,
                },
                DType::I64,
                vec![n],
                &[],
            )
        };
        let rows = arange(s, r);
        let rows = s.view_node(
            rows,
            &Layout::contiguous(&[r, 1]).expand(&to_isize(&[r, c]))?,
        );
        let cols = arange(s, c);
        let cols = s.view_node(cols, &Layout::contiguous(&[c]).expand(&to_isize(&[r, c]))?);
        let offset = s.add(
            Op::Binary(BinaryOp::Sub),
            DType::I64,
            vec![r, c],
            &[cols, rows],
        );
        let diag = s.add(Op::Full(Scalar::Int(diagonal)), DType::I64, vec![], &[]);
        let diag = s.view_node(diag, &Layout::contiguous(&[]).expand(&to_isize(&[r, c]))?);
        let cmp = if upper { BinaryOp::Ge } else { BinaryOp::Le };
        let keep = s.add(Op::Binary(cmp), DType::Bool, vec![r, c], &[offset, diag]);
        let keep = s.view_node(
            keep,
            &Layout::contiguous(&[r, c]).expand(&to_isize(&shape))?,
        );
        let x = self.node(s);
        let zero = s.add(Op::Full(Scalar::Int(0)), self.dtype(), vec![], &[]);
        let zero = s.view_node(zero, &Layout::contiguous(&[]).expand(&to_isize(&shape))?);
        Ok(s.add(Op::Where, self.dtype(), shape, &[keep, x, zero]))
    }

    /// The lower triangle of the last two dims: elements with `col - row <= diagonal`
    /// are kept, the others become zero.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::ones(&[2, 3], DType::I32);
    /// assert_eq!(x.tril(0)?.to_vec::<i32>()?, vec![1, 0, 0, 1, 1, 0]);
    /// assert_eq!(x.tril(-1)?.to_vec::<i32>()?, vec![0, 0, 0, 1, 0, 0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        with_store(|s| {
            let node = self.triangle_node(s, diagonal, false)?;
            Ok(Tensor::from_node(s, node))
        })
    }

    /// The upper triangle of the last two dims: elements with `col - row >= diagonal`
    /// are kept, the others become zero.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::ones(&[2, 3], DType::Bool);
    /// assert_eq!(x.triu(1)?.to_vec::<bool>()?, vec![false, true, true, false, false, true]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        with_store(|s| {
            let node = self.triangle_node(s, diagonal, true)?;
            Ok(Tensor::from_node(s, node))
        })
    }

    /// [`Tensor::tril`] in place.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::ones(&[2, 2], DType::F32);
    /// x.tril_(0)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![1.0, 0.0, 1.0, 1.0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn tril_(&self, diagonal: i64) -> Result<()> {
        self.check_destination(None)?;
        with_store(|s| {
            let node = self.triangle_node(s, diagonal, false)?;
            self.write(s, node);
            Ok(())
        })
    }

    /// [`Tensor::triu`] in place.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::ones(&[2, 2], DType::F32);
    /// x.triu_(0)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![1.0, 1.0, 0.0, 1.0]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn triu_(&self, diagonal: i64) -> Result<()> {
        self.check_destination(None)?;
        with_store(|s| {
            let node = self.triangle_node(s, diagonal, true)?;
            self.write(s, node);
            Ok(())
        })
    }

    /// A copy with the order of the elements reversed along each of `dims`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1i64, 2, 3, 4, 5, 6], &[2, 3])?;
    /// assert_eq!(x.flip(&[0, -1])?.to_vec::<i64>()?, vec![6, 5, 4, 3, 2, 1]);
    /// assert!(x.flip(&[0, -2]).is_err()); // the same dim twice
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn flip(&self, dims: &[isize]) -> Result<Tensor> {
        let mut axes = Vec::with_capacity(dims.len());
        for &d in dims {
            let a = wrap_dim(d, self.ndim())?;
            if axes.contains(&a) {
                return Err(IrError::invalid(
                    "flip",
                    format!("dim {a} appears multiple times in the list of dims"),
                )
                .into());
            }
            axes.push(a);
        }
        axes.sort_unstable();
        let shape = nonempty(&self.shape());
        let inner = axes
            .last()
            .map_or(self.numel(), |&a| numel(&shape[a + 1..]));
        if self.numel() > 0 {
            // no kernel (and no dtype refusal) for an empty tensor
            rules::flip_dtype(self.dtype(), inner)?;
        }
        with_store(|s| {
            let x = self.node(s);
            let node = s.add(Op::Flip { axes }, self.dtype(), self.shape(), &[x]);
            Ok(Tensor::from_node(s, node))
        })
    }

    /// A copy with the elements shifted by `shifts[k]` along `dims[k]` (positive
    /// toward higher indices, wrapping around). With no `dims`, the tensor is rolled
    /// as a flat vector by the single shift.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![0i32, 1, 2, 3, 4, 5], &[2, 3])?;
    /// assert_eq!(x.roll(&[1], &[])?.to_vec::<i32>()?, vec![5, 0, 1, 2, 3, 4]);
    /// assert_eq!(x.roll(&[-1], &[1])?.to_vec::<i32>()?, vec![1, 2, 0, 4, 5, 3]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn roll(&self, shifts: &[i64], dims: &[isize]) -> Result<Tensor> {
        let bad = |m: String| -> Result<Tensor> { Err(IrError::invalid("roll", m).into()) };
        if shifts.is_empty() {
            return bad("`shifts` required".into());
        }
        if dims.is_empty() && shifts.len() != 1 || !dims.is_empty() && dims.len() != shifts.len() {
            return bad(format!(
                "shifts and dimensions must align. shifts: {}, dims:{}",
                shifts.len(),
                dims.len()
            ));
        }
        if self.ndim() == 0 && !dims.is_empty() {
            return bad(format!(
                "Dimension specified as {} but tensor has no dimensions",
                dims[0]
            ));
        }
        let shape = self.shape();
        let (work_shape, plan): (Vec<usize>, Vec<(i64, usize)>) = if dims.is_empty() {
            (vec![self.numel()], vec![(shifts[0], 0)])
        } else {
            let mut plan = Vec::with_capacity(dims.len());
            for (&shift, &d) in shifts.iter().zip(dims) {
                plan.push((shift, wrap_dim(d, shape.len())?));
            }
            (shape.clone(), plan)
        };
        with_store(|s| {
            let read = self.node(s);
            let mut node = s.view_node(read, &Layout::contiguous(&work_shape));
            for (shift, axis) in plan {
                let size = work_shape[axis];
                if size == 0 {
                    continue;
                }
                let k = shift.rem_euclid(size as i64) as usize;
                if k == 0 {
                    continue;
                }
                let whole = Layout::contiguous(&work_shape);
                let tail = s.view_node(node, &whole.narrow(axis as isize, (size - k) as isize, k)?);
                let head = s.view_node(node, &whole.narrow(axis as isize, 0, size - k)?);
                node = s.add(
                    Op::Cat { axis },
                    self.dtype(),
                    work_shape.clone(),
                    &[tail, head],
                );
            }
            let node = s.view_node(node, &Layout::contiguous(&shape));
            Ok(Tensor::from_node(s, node))
        })
    }

    /// A copy repeated `sizes[k]` times along each dim (`sizes` may have more dims
    /// than the tensor: it gains leading dims of size 1 first).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2], &[2])?;
    /// let r = x.repeat(&[2, 2])?;
    /// assert_eq!((r.shape(), r.to_vec::<i32>()?), (vec![2, 4], vec![1, 2, 1, 2, 1, 2, 1, 2]));
    /// assert!(x.repeat(&[]).is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn repeat(&self, sizes: &[usize]) -> Result<Tensor> {
        if sizes.len() < self.ndim() {
            return Err(IrError::invalid(
                "repeat",
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
            )
            .into());
        }
        let mut padded = vec![1usize; sizes.len() - self.ndim()];
        padded.extend(self.shape());
        // PyTorch multiplies the sizes in int64 with wraparound (a count past
        // `i64::MAX` reads as negative) and refuses a negative result.
        let signed: Vec<i64> = padded
            .iter()
            .zip(sizes)
            .map(|(&p, &r)| (p as i64).wrapping_mul(r as i64))
            .collect();
        if let Some(&negative) = signed.iter().find(|&&n| n < 0) {
            return Err(IrError::invalid(
                "repeat",
                format!("Trying to create tensor with negative dimension {negative}: {signed:?}"),
            )
            .into());
        }
        // A product that wrapped around to a non-negative size would be a wrong shape
        // (an empty tensor can have any other size): refuse it as an overflow.
        let out: Vec<usize> = padded
            .iter()
            .zip(sizes)
            .map(|(&p, &r)| p.saturating_mul(r))
            .collect();
        if out.iter().any(|&n| n > i64::MAX as usize) {
            return Err(IrError::invalid(
                "repeat",
                format!(
                    "Storage size calculation overflowed with sizes={}",
                    fmt_shape(&out)
                ),
            )
            .into());
        }
        checked_numel(&out, self.dtype())?;
        // Read the input as [r0, p0, r1, p1, ...] with stride 0 on the repeats, then
        // reshape the (contiguous) result to [r0 * p0, r1 * p1, ...].
        let strides = Layout::contiguous(&padded).strides;
        let mut shape = Vec::with_capacity(2 * sizes.len());
        let mut expanded = Vec::with_capacity(2 * sizes.len());
        for ((&p, &r), &st) in padded.iter().zip(sizes).zip(&strides) {
            shape.extend([r, p]);
            expanded.extend([0, st]);
        }
        let layout = Layout {
            shape: shape.into(),
            strides: expanded.into(),
            offset: 0,
        };
        with_store(|s| {
            let read = self.node(s);
            let node = s.view_node(read, &layout);
            let node = s.view_node(node, &Layout::contiguous(&out));
            Ok(Tensor::from_node(s, node))
        })
    }

    /// [`Tensor::repeat`] where `reps` may have fewer dims than the tensor (it gains
    /// leading 1s), as `torch.tile`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(x.tile(&[2])?.to_vec::<i32>()?, vec![1, 2, 1, 2, 3, 4, 3, 4]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn tile(&self, reps: &[usize]) -> Result<Tensor> {
        let mut full = vec![1usize; self.ndim().saturating_sub(reps.len())];
        full.extend_from_slice(reps);
        self.repeat(&full)
    }

    /// Constant padding (`torch.nn.functional.pad`, mode `"constant"`): `pad` holds
    /// `(left, right)` pairs starting from the last dim; negative amounts crop.
    /// New elements are `value` (which must fit the dtype).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2])?;
    /// let p = x.pad(&[1, -1, 0, 1], 9)?;
    /// assert_eq!((p.shape(), p.to_vec::<i32>()?), (vec![3, 2], vec![9, 1, 9, 3, 9, 9]));
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    pub fn pad(&self, pad: &[i64], value: impl Into<Scalar>) -> Result<Tensor> {
        let value = value.into();
        let plan = rules::pad_plan(&self.shape(), pad)?;
        check_fill_value(value, self.dtype())?;
        let out: Vec<usize> = plan.iter().map(PadDim::size).collect();
        checked_numel(&out, self.dtype())?;
        let mut kept = self.strided_layout().clone();
        for (d, p) in plan.iter().enumerate() {
            kept = kept.narrow(d as isize, p.start as isize, p.len)?;
        }
        let whole = Layout::contiguous(&out);
        let mut target = whole.clone();
        for (d, p) in plan.iter().enumerate() {
            target = target.narrow(d as isize, p.before as isize, p.len)?;
        }
        if numel(&out) > 0 && numel(&kept.shape) == numel(&out) {
            // nothing to fill: a copy of the kept part
            return Ok(self.with_layout(kept).fresh_copy());
        }
        with_store(|s| {
            let full = s.add(Op::Full(value), self.dtype(), out.clone(), &[]);
            s.set_device(full, self.device());
            // an empty kept part is still written: the result's history reaches self
            let inner = self.read_through(s, &kept);
            let node = s.add(Op::write_view(target), self.dtype(), out, &[full, inner]);
            Ok(Tensor::from_node(s, node))
        })
    }
}
