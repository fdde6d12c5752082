//! `matmul` (every `torch.matmul` shape case), `cat` and `stack`.
//!
//! `matmul` reduces every case to one batched `[B, M, K] @ [B, K, N]` node: 1-D
//! operands gain a dim that is removed afterwards, batch dims broadcast (a batched
//! left operand times one matrix folds its batch into the rows, as PyTorch does),
//! and the operands are read through views (a node's output is contiguous, so a
//! reshape of it is only a view).

use crate::autograd::record::Custom;
use crate::error::Result;
use crate::ops::elementwise::to_isize;
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::broadcast::broadcast_shapes;
use lazyfuse_ir::promote::{result_type, OperandType, Priority};
use lazyfuse_ir::shape::{checked_numel, fmt_shape, numel, wrap_dim};
use lazyfuse_ir::{typing, DType, Error as IrError, Layout, Op};

impl Tensor {
    /// Matrix product with `torch.matmul`'s shape rules: dot product (1-D·1-D),
    /// matrix-vector, vector-matrix, matrix-matrix and batched with broadcast batch
    /// dims. Both operands must have the same dtype (no promotion, as in PyTorch).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    /// let v = Tensor::from_vec(vec![1.0f32, 1.0], &[2]).unwrap();
    /// assert_eq!(a.matmul(&v).unwrap().to_vec::<f32>().unwrap(), vec![3.0, 7.0]);
    /// assert_eq!(v.matmul(&v).unwrap().shape(), Vec::<usize>::new());
    /// ```
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        Tensor::same_device("matmul", &[self, other])?;
        let (sa, sb) = (self.shape(), other.shape());
        if sa.is_empty() || sb.is_empty() {
            return Err(IrError::invalid(
                "matmul",
                format!(
                    "both arguments to matmul need to be at least 1D, but they are {}D and {}D",
                    sa.len(),
                    sb.len()
                ),
            )
            .into());
        }
        let half_complex = matches!(self.dtype(), DType::C32 | DType::BC32);
        if half_complex && self.dtype() == other.dtype() {
            // PyTorch checks the shapes, then its kernel refuses the half complex types.
            let kernel = matmul_shape_check(&sa, &self.strides(), &sb, &other.strides())?;
            return Err(IrError::not_implemented(kernel, self.dtype()).into());
        }
        let dtype = typing::matmul_nd(self.dtype(), sa.len(), other.dtype(), sb.len())?;
        matmul_shape_check(&sa, &self.strides(), &sb, &other.strides())?;
        // Promote 1-D operands to matrices, remembering which dims to drop after.
        let (a_mat, drop_m) = if sa.len() == 1 {
            (vec![1, sa[0]], true)
        } else {
            (sa.clone(), false)
        };
        let (b_mat, drop_n) = if sb.len() == 1 {
            (vec![sb[0], 1], true)
        } else {
            (sb.clone(), false)
        };
        let (m, k) = (a_mat[a_mat.len() - 2], a_mat[a_mat.len() - 1]);
        let (k2, n) = (b_mat[b_mat.len() - 2], b_mat[b_mat.len() - 1]);
        if k != k2 {
            return Err(matmul_shape_error(&sa, &sb, m, k, k2, n).into());
        }
        let batch_a = &a_mat[..a_mat.len() - 2];
        let batch_b = &b_mat[..b_mat.len() - 2];
        let batch = broadcast_shapes(batch_a, batch_b)?;
        let mut out_shape = batch.clone();
        if !drop_m {
            out_shape.push(m);
        }
        if !drop_n {
            out_shape.push(n);
        }
        // A result (or a batch) too large to index is PyTorch's storage-size error,
        // never a size that wrapped around.
        checked_numel(&out_shape, dtype)?;
        let b = checked_numel(&batch, dtype)?;
        let full = |mat: [usize; 2]| -> Vec<usize> { batch.iter().copied().chain(mat).collect() };
        let transposed = [column_major(self), column_major(other)];
        // A batched left operand whose rows stack without a copy, times one matrix,
        // is one product of the stacked rows, as PyTorch folds it: one larger gemm
        // instead of `b` small ones, and a gradient for the matrix that needs no sum
        // over the batch. Otherwise both operands are expanded to the full batch.
        let fold = batch_b.is_empty()
            && !batch_a.is_empty()
            && self.0.layout.view(&[(b * m) as isize, k as isize]).is_ok();
        let (nb, rows) = if fold { (1, b * m) } else { (b, m) };
        with_store(|s| {
            let read_a = self.node(s);
            let a_full = if fold {
                read_a
            } else {
                let a_layout = Layout::contiguous(&a_mat).expand(&to_isize(&full([m, k])))?;
                s.view_node(read_a, &a_layout)
            };
            let a3 = s.view_node(a_full, &Layout::contiguous(&[nb, rows, k]));
            let read_b = other.node(s);
            let b_full = if fold {
                read_b
            } else {
                let b_layout = Layout::contiguous(&b_mat).expand(&to_isize(&full([k, n])))?;
                s.view_node(read_b, &b_layout)
            };
            let b3 = s.view_node(b_full, &Layout::contiguous(&[nb, k, n]));
            let product = s.add(Op::Matmul, dtype, vec![nb, rows, n], &[a3, b3]);
            if transposed.contains(&true) {
                s.custom_rule(product, Custom::Matmul { transposed }, vec![a3, b3]);
            }
            let out = s.view_node(product, &Layout::contiguous(&out_shape));
            Ok(Tensor::from_node(s, out))
        })
    }

    /// Concatenates along `dim`; dtypes promote; shapes must match elsewhere.
    /// (Legacy rule kept from PyTorch: 1-D empty tensors are skipped.)
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::ones(&[1, 2], DType::I32);
    /// let b = Tensor::zeros(&[2, 2], DType::F32);
    /// let c = Tensor::cat(&[&a, &b], 0).unwrap();
    /// assert_eq!((c.shape(), c.dtype()), (vec![3, 2], DType::F32));
    /// ```
    pub fn cat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        if tensors.is_empty() {
            return Err(IrError::invalid(
                "cat",
                "torch.cat(): expected a non-empty list of Tensors",
            )
            .into());
        }
        for (i, t) in tensors.iter().enumerate() {
            if t.ndim() == 0 {
                return Err(IrError::invalid(
                    "cat",
                    format!("zero-dimensional tensor (at position {i}) cannot be concatenated"),
                )
                .into());
            }
        }
        let types: Vec<OperandType> = tensors
            .iter()
            .map(|t| OperandType {
                dtype: t.dtype(),
                priority: Priority::Dimensioned,
            })
            .collect();
        let dtype = result_type(&types, crate::default_dtype())?;
        let parts: Vec<&Tensor> = tensors
            .iter()
            .copied()
            .filter(|t| !(t.ndim() == 1 && t.numel() == 0))
            .collect();
        Tensor::same_device("cat", tensors)?;
        let Some(first) = parts.first() else {
            return Ok(Tensor::constant_on(
                &[0],
                lazyfuse_ir::Scalar::Int(0),
                dtype,
                tensors[0].device(),
            ));
        };
        let reference = first.shape();
        let axis = wrap_dim(dim, reference.len())?;
        let mut out_shape = reference.clone();
        out_shape[axis] = 0;
        for (i, t) in parts.iter().enumerate() {
            let shape = t.shape();
            if shape.len() != reference.len() {
                return Err(IrError::invalid(
                    "cat",
                    format!(
                        "Tensors must have same number of dimensions: got {} and {}",
                        reference.len(),
                        shape.len()
                    ),
                )
                .into());
            }
            for d in 0..shape.len() {
                if d != axis && shape[d] != reference[d] {
                    return Err(IrError::invalid(
                        "cat",
                        format!(
                            "Sizes of tensors must match except in dimension {axis}. Expected size {} but got size {} for tensor number {i} in the list.",
                            reference[d], shape[d]
                        ),
                    )
                    .into());
                }
            }
            // ATen adds the sizes in int64: a sum past i64::MAX reads as negative,
            // its error. Never a size that wrapped around.
            let total = out_shape[axis].saturating_add(shape[axis]);
            if total > i64::MAX as usize {
                let wrapped = (out_shape[axis] as i64).wrapping_add(shape[axis] as i64);
                let mut sizes: Vec<i64> = out_shape.iter().map(|&v| v as i64).collect();
                sizes[axis] = wrapped;
                let message = if wrapped < 0 {
                    format!("Trying to create tensor with negative dimension {wrapped}: {sizes:?}")
                } else {
                    out_shape[axis] = total;
                    format!(
                        "Storage size calculation overflowed with sizes={}",
                        fmt_shape(&out_shape)
                    )
                };
                return Err(IrError::invalid("cat", message).into());
            }
            out_shape[axis] = total;
        }
        checked_numel(&out_shape, dtype)?;
        with_store(|s| {
            let mut inputs = Vec::with_capacity(parts.len());
            for t in &parts {
                inputs.push(t.node_as(s, dtype, &t.shape())?);
            }
            let node = s.add(Op::Cat { axis }, dtype, out_shape, &inputs);
            Ok(Tensor::from_node(s, node))
        })
    }

    /// Stacks equal-shaped tensors along a new dim `dim`.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::ones(&[2], DType::F32);
    /// assert_eq!(Tensor::stack(&[&a, &a], 1).unwrap().shape(), vec![2, 2]);
    /// ```
    pub fn stack(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        let Some(first) = tensors.first() else {
            return Err(IrError::invalid("stack", "stack expects a non-empty TensorList").into());
        };
        let reference = first.shape();
        for (i, t) in tensors.iter().enumerate() {
            if t.shape() != reference {
                return Err(IrError::invalid(
                    "stack",
                    format!(
                        "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                        fmt_shape(&reference),
                        fmt_shape(&t.shape())
                    ),
                )
                .into());
            }
        }
        let axis = wrap_dim(dim, reference.len() + 1)?;
        let unsqueezed = tensors
            .iter()
            .map(|t| t.unsqueeze(axis as isize))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&Tensor> = unsqueezed.iter().collect();
        Tensor::cat(&refs, axis as isize)
    }
}

/// PyTorch's message for the shape case that failed.
/// Whether `t`'s last two dims read a column-major matrix (a transposed view), as
/// PyTorch's matmul backward tests an operand's strides.
fn column_major(t: &Tensor) -> bool {
    let (shape, strides) = (t.shape(), t.strides());
    let d = shape.len();
    d >= 2
        && shape[d - 2] > 1
        && shape[d - 1] > 1
        && strides[d - 2] == 1
        && strides[d - 1] == shape[d - 2] as isize
}

fn matmul_shape_error(
    sa: &[usize],
    sb: &[usize],
    m: usize,
    k: usize,
    k2: usize,
    n: usize,
) -> IrError {
    let message = match (sa.len(), sb.len()) {
        (1, 1) => format!(
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
            sa[0], sb[0], sa[0], sb[0]
        ),
        (2, 1) => format!("size mismatch, got input ({m}), mat ({m}x{k}), vec ({k2})"),
        (1, 2) | (2, 2) => format!("mm: mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})"),
        _ => format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{}, {k}] but got: [{}, {k2}].",
            numel(&sa[..sa.len().saturating_sub(2)]).max(1),
            numel(&sb[..sb.len().saturating_sub(2)]).max(1)
        ),
    };
    IrError::invalid("matmul", message)
}

/// PyTorch's `matmul` dispatch, for its shape errors: dot (1-D·1-D), mv (2-D·1-D), mm
/// (with 1-D left operands as a row), the *folded* cases (`should_fold`: a ≥3-D
/// operand viewed as a matrix without a copy goes to mm/mv with its leading dims
/// flattened into rows), and otherwise bmm after broadcasting the batch dims (so a
/// batch mismatch is reported before a size mismatch). Returns the name of the kernel
/// PyTorch dispatches to (what its dtype refusals name).
fn matmul_shape_check(
    sa: &[usize],
    stra: &[isize],
    sb: &[usize],
    strb: &[isize],
) -> std::result::Result<&'static str, IrError> {
    let (da, db) = (sa.len(), sb.len());
    let err = |m: String| Err(IrError::invalid("matmul", m));
    let mm = |r: usize, k: usize, k2: usize, n: usize| {
        format!("mm: mat1 and mat2 shapes cannot be multiplied ({r}x{k} and {k2}x{n})")
    };
    let mv = |r: usize, k: usize, v: usize| {
        format!("size mismatch, got input ({r}), mat ({r}x{k}), vec ({v})")
    };
    match (da, db) {
        (1, 1) if sa[0] != sb[0] => {
            return err(format!(
                "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                sa[0], sb[0], sa[0], sb[0]
            ))
        }
        (2, 1) if sa[1] != sb[0] => return err(mv(sa[0], sa[1], sb[0])),
        (1, 2) if sa[0] != sb[0] => return err(mm(1, sa[0], sb[0], sb[1])),
        (2, 2) if sa[1] != sb[0] => return err(mm(sa[0], sa[1], sb[0], sb[1])),
        (1, 1) => return Ok("dot"),
        (2, 1) => return Ok("addmv_impl_cpu"),
        (1 | 2, 2) => return Ok("addmm_impl_cpu_"),
        _ => {}
    }
    if should_fold(sa, stra, sb, strb) {
        if da >= db {
            let (rows, k) = (numel(&sa[..da - 1]), sa[da - 1]);
            if k != sb[0] {
                return err(if db == 1 {
                    mv(rows, k, sb[0])
                } else {
                    mm(rows, k, sb[0], sb[1])
                });
            }
            return Ok(if db == 1 {
                "addmv_impl_cpu"
            } else {
                "addmm_impl_cpu_"
            });
        } else {
            // The right operand, transposed, is folded; the left is the vector.
            let rows = numel(&sb[..db - 2]) * sb[db - 1];
            let k = sb[db - 2];
            if k != sa[0] {
                return err(mv(rows, k, sa[0]));
            }
            return Ok("addmv_impl_cpu");
        }
    }
    let m1 = sa[da - 1];
    let m2 = if db > 1 { sb[db - 2] } else { sb[0] };
    let batch = broadcast_shapes(&sa[..da.saturating_sub(2)], &sb[..db.saturating_sub(2)])?;
    let b = numel(&batch);
    if m1 != m2 {
        return err(format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{b}, {m1}] but got: [{b}, {m2}]."
        ));
    }
    Ok("bmm")
}

/// ATen's `should_fold` (without autograd): the larger operand (the right one
/// transposed when it is larger) has ≥3 dims, the other ≤2, the left operand is not
/// a matrix, and the larger one's leading dims flatten without a copy (or it is empty).
fn should_fold(sa: &[usize], stra: &[isize], sb: &[usize], strb: &[isize]) -> bool {
    let (da, db) = (sa.len(), sb.len());
    let (shape, strides, other_dims) = if da >= db {
        (sa.to_vec(), stra.to_vec(), db)
    } else {
        let (mut sh, mut st) = (sb.to_vec(), strb.to_vec());
        sh.swap(db - 1, db - 2);
        st.swap(db - 1, db - 2);
        (sh, st, da)
    };
    if !(shape.len() >= 3 && other_dims <= 2) || da == 2 {
        return false;
    }
    if numel(&shape) == 0 {
        return true;
    }
    (0..shape.len() - 2).all(|i| strides[i] == strides[i + 1] * shape[i + 1] as isize)
}
