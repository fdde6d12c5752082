//! PyTorch's tensor printing (`torch/_tensor_str.py`), as a pure function over the
//! logical elements of a tensor.
//!
//! [`format_tensor`] reproduces `repr(tensor)` with the default print options
//! (precision 4, threshold 1000, edgeitems 3, linewidth 80):
//!
//! * one formatter per tensor (two for complex: real and imaginary parts) decides the
//!   mode and a common width from all (or, when summarizing, the shown) elements:
//!   integer-valued floats print as `1.`, others with 4 decimals, scientific notation
//!   (`1.0000e-05`) when the nonzero finite magnitudes span more than 1000x, exceed
//!   1e8, or (for non-integer values) go below 1e-4;
//! * rows wrap at 80 columns, nested dims are separated by `dim - 1` blank lines and
//!   indented to align after `tensor(`;
//! * more than 1000 elements are summarized with `...`, 3 items at each edge per dim;
//! * suffixes: `size=(..)` for empty tensors that are not 1-D, and `dtype=torch.X` unless
//!   the dtype is the default float dtype, its complex counterpart, int64 or bool (empty
//!   tensors show every dtype other than the default float dtype).
//!
//! [`format_tensor_on`] adds the device suffix (`device='cuda:0'`) first, as PyTorch
//! does for a tensor off the CPU.

use half::{bf16, f16};
use lazyfuse_ir::DType;
use lazyfuse_runtime::interp::float8::Format;
use lazyfuse_runtime::Buffer;

/// `PRINT_OPTS.precision`
const PRECISION: usize = 4;
/// `PRINT_OPTS.threshold`: more elements than this are summarized.
const THRESHOLD: usize = 1000;
/// `PRINT_OPTS.edgeitems`
const EDGEITEMS: usize = 3;
/// `PRINT_OPTS.linewidth`
const LINEWIDTH: usize = 80;
/// `tensor(`
const PREFIX: &str = "tensor(";

/// PyTorch's `repr` of a tensor whose elements, in logical row-major order, are `values`
/// (or, for a tensor of more than `THRESHOLD` elements, only the elements a summary
/// shows: the sub-tensor of [`shown_indices`] per dim, so that printing a huge tensor
/// reads only what it prints)
/// and whose shape is `shape`; `default_float` is the default float dtype (it decides
/// whether the `dtype=` suffix is printed).
///
/// `tensor([[1., 2.],\n        [3., 4.]])`, `tensor([0.1000, 2.5000])`,
/// `tensor([1, 2], dtype=torch.int32)`, `tensor([], size=(0, 3))`.
#[cfg(test)]
pub(crate) fn format_tensor(values: &Buffer, shape: &[usize], default_float: DType) -> String {
    format_tensor_on(values, shape, default_float, crate::Device::CPU)
}

/// [`format_tensor`] of a tensor on `device`: `tensor([1., 2.], device='cuda:0')`.
pub(crate) fn format_tensor_on(
    values: &Buffer,
    shape: &[usize],
    default_float: DType,
    device: crate::Device,
) -> String {
    let dtype = values.dtype();
    let numel: usize = shape.iter().product();
    let indent = PREFIX.len();
    let mut suffixes = Vec::new();
    if device != crate::Device::CPU {
        suffixes.push(format!("device='{device}'"));
    }
    let body = if numel == 0 {
        // Explicit shape unless (0,), as NumPy; the dtype is shown for anything but the
        // default float dtype, since no element hints at it.
        if shape.len() != 1 {
            suffixes.push(format!("size={}", py_tuple(shape)));
        }
        if dtype != default_float {
            suffixes.push(format!("dtype=torch.{dtype}"));
        }
        "[]".to_string()
    } else {
        let default_complex = if default_float == DType::F64 {
            DType::C128
        } else {
            DType::C64
        };
        if ![default_float, default_complex, DType::I64, DType::Bool].contains(&dtype) {
            suffixes.push(format!("dtype=torch.{dtype}"));
        }
        match Elements::from_buffer(values) {
            Some(elems) if elems.len() == numel => tensor_str(&elems, shape, indent, false),
            // Only the shown elements (see `shown_shape`), as a summarizing caller
            // reads them.
            Some(elems)
                if numel > THRESHOLD
                    && elems.len() == shown_shape(shape).iter().product::<usize>() =>
            {
                tensor_str(&elems, shape, indent, true)
            }
            // The caller guarantees one element per index; say so rather than panic.
            _ => format!(
                "<{} elements of {dtype} for shape {}>",
                values.len(),
                py_tuple(shape)
            ),
        }
    };
    add_suffixes(format!("{PREFIX}{body}"), &suffixes, indent)
}

/// A shape as Python prints a tuple: `(0,)`, `(0, 3)`, `()`.
fn py_tuple(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `_add_suffixes`: appends `, suffix` or, past the line width, `,\n<indent>suffix`.
fn add_suffixes(mut s: String, suffixes: &[String], indent: usize) -> String {
    // Python: len(s) - s.rfind("\n") + 1, where rfind gives -1 without a newline.
    let mut last_line_len = match s.rfind('\n') {
        Some(i) => s.len() - i + 1,
        None => s.len() + 2,
    };
    for suffix in suffixes {
        if last_line_len + suffix.len() + 2 > LINEWIDTH {
            s.push_str(",\n");
            s.push_str(&" ".repeat(indent));
            s.push_str(suffix);
            last_line_len = indent + suffix.len();
        } else {
            s.push_str(", ");
            s.push_str(suffix);
            last_line_len += suffix.len() + 2;
        }
    }
    s.push(')');
    s
}

/// The elements, widened the way Python sees them (`tensor.tolist()`).
enum Elements {
    /// bool and integers, already as Python prints them (`True`, `-3`).
    Text(Vec<String>),
    /// real floats widened to `f64` (exactly, as `.item()` does).
    Real(Vec<f64>),
    /// complex: real parts and imaginary parts.
    Complex(Vec<f64>, Vec<f64>),
}

impl Elements {
    fn from_buffer(b: &Buffer) -> Option<Elements> {
        fn text<T: ToString>(v: &[T]) -> Elements {
            Elements::Text(v.iter().map(ToString::to_string).collect())
        }
        Some(match b {
            Buffer::Bool(v) => Elements::Text(
                v.iter()
                    .map(|&x| if x { "True" } else { "False" }.to_string())
                    .collect(),
            ),
            Buffer::U8(v) => text(v),
            Buffer::I8(v) => text(v),
            Buffer::I16(v) => text(v),
            Buffer::I32(v) => text(v),
            Buffer::I64(v) => text(v),
            Buffer::U16(v) => text(v),
            Buffer::U32(v) => text(v),
            Buffer::U64(v) => text(v),
            Buffer::F16(v) => Elements::Real(v.iter().map(|x| x.to_f64()).collect()),
            Buffer::BF16(v) => Elements::Real(v.iter().map(|x| x.to_f64()).collect()),
            Buffer::F32(v) => Elements::Real(v.iter().map(|&x| f64::from(x)).collect()),
            Buffer::F64(v) => Elements::Real(v.clone()),
            Buffer::C64(v) => Elements::Complex(
                v.iter().map(|c| f64::from(c.re)).collect(),
                v.iter().map(|c| f64::from(c.im)).collect(),
            ),
            Buffer::C128(v) => Elements::Complex(
                v.iter().map(|c| c.re).collect(),
                v.iter().map(|c| c.im).collect(),
            ),
            Buffer::Raw { dtype, bytes } => raw_elements(*dtype, bytes)?,
        })
    }

    fn len(&self) -> usize {
        match self {
            Elements::Text(v) => v.len(),
            Elements::Real(v) => v.len(),
            Elements::Complex(re, _) => re.len(),
        }
    }
}

/// Decodes the storage-only dtypes kept as raw little-endian bytes: complex32 and
/// bcomplex32 (pairs of 16-bit floats) and the float8 formats.
///
/// Float8 elements print as the floats they stand for: `_tensor_str` converts the
/// four sign-magnitude formats to float16 (exactly: every one of their values is a
/// float16) and formats `float8_e8m0fnu` through `float32`, so the value decoded with
/// the interpreter's codec is what PyTorch formats.
fn raw_elements(dtype: DType, bytes: &[u8]) -> Option<Elements> {
    let halves = |conv: fn(u16) -> f64| -> Vec<f64> {
        bytes
            .chunks_exact(2)
            .map(|c| conv(u16::from_le_bytes([c[0], c[1]])))
            .collect()
    };
    let split = |v: Vec<f64>| {
        let re = v.iter().step_by(2).copied().collect();
        let im = v.iter().skip(1).step_by(2).copied().collect();
        Elements::Complex(re, im)
    };
    Some(match dtype {
        DType::C32 => split(halves(|b| f16::from_bits(b).to_f64())),
        DType::BC32 => split(halves(|b| bf16::from_bits(b).to_f64())),
        _ => {
            let format = Format::of(dtype)?;
            Elements::Real(bytes.iter().map(|&b| f64::from(format.decode(b))).collect())
        }
    })
}

/// `_Formatter`: the printing mode and common width of one set of values.
struct Formatter {
    /// All nonzero finite values are integers: print `1.`.
    int_mode: bool,
    /// Scientific notation.
    sci_mode: bool,
    /// The common width every element is right-aligned to.
    max_width: usize,
}

impl Formatter {
    fn for_text<'a>(values: impl Iterator<Item = &'a String>) -> Formatter {
        Formatter {
            int_mode: true,
            sci_mode: false,
            max_width: values.map(String::len).fold(1, usize::max),
        }
    }

    fn for_floats(values: impl Iterator<Item = f64>) -> Formatter {
        let mut f = Formatter {
            int_mode: true,
            sci_mode: false,
            max_width: 1,
        };
        let nonzero_finite: Vec<f64> = values.filter(|x| x.is_finite() && *x != 0.0).collect();
        if nonzero_finite.is_empty() {
            return f;
        }
        let abs = nonzero_finite.iter().map(|x| x.abs());
        let min = abs.clone().fold(f64::INFINITY, f64::min);
        let max = abs.fold(0.0, f64::max);
        f.int_mode = nonzero_finite.iter().all(|x| *x == x.ceil());
        f.sci_mode = max / min > 1000.0 || max > 1.0e8 || (!f.int_mode && min < 1.0e-4);
        f.max_width = nonzero_finite
            .iter()
            .map(|&x| {
                if f.sci_mode {
                    py_sci(x).len()
                } else if f.int_mode {
                    py_fixed(x, 0).len() + 1
                } else {
                    py_fixed(x, PRECISION).len()
                }
            })
            .fold(1, usize::max);
        f
    }

    /// `_Formatter.format` of a float, padded to the common width.
    fn format_float(&self, x: f64) -> String {
        let s = if self.sci_mode {
            py_sci(x)
        } else if self.int_mode {
            let mut s = py_fixed(x, 0);
            if x.is_finite() {
                s.push('.');
            }
            s
        } else {
            py_fixed(x, PRECISION)
        };
        self.pad(s)
    }

    fn pad(&self, s: String) -> String {
        if s.len() >= self.max_width {
            s
        } else {
            format!("{}{s}", " ".repeat(self.max_width - s.len()))
        }
    }
}

/// Python's `"{:.Nf}".format(x)`: Rust's fixed formatting rounds the exact binary value
/// the same way; only the names of the non-finite values differ.
fn py_fixed(x: f64, precision: usize) -> String {
    match py_nonfinite(x) {
        Some(s) => s.to_string(),
        None => format!("{x:.precision$}"),
    }
}

/// Python's `"{:.4e}".format(x)`: the exponent has a sign and at least two digits.
fn py_sci(x: f64) -> String {
    if let Some(s) = py_nonfinite(x) {
        return s.to_string();
    }
    let s = format!("{x:.PRECISION$e}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

fn py_nonfinite(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("nan")
    } else if x == f64::INFINITY {
        Some("inf")
    } else if x == f64::NEG_INFINITY {
        Some("-inf")
    } else {
        None
    }
}

/// The formatters of a tensor (one, or real and imaginary for complex).
struct Formatters {
    first: Formatter,
    imag: Option<Formatter>,
}

impl Formatters {
    /// One element, as `_val_formatter` / `_scalar_str` print it.
    fn element(&self, elems: &Elements, i: usize) -> String {
        match (elems, &self.imag) {
            (Elements::Text(v), _) => self.first.pad(v[i].clone()),
            (Elements::Real(v), _) => self.first.format_float(v[i]),
            (Elements::Complex(re, im), Some(fi)) => {
                let real = self.first.format_float(re[i]);
                let imag = format!("{}j", fi.format_float(im[i]));
                let imag = imag.trim_start();
                if imag.starts_with('+') || imag.starts_with('-') {
                    format!("{real}{imag}")
                } else {
                    format!("{real}+{imag}")
                }
            }
            (Elements::Complex(re, _), None) => self.first.format_float(re[i]),
        }
    }

    /// Width of one element plus `", "` (`_vector_str`'s `element_length`).
    fn element_length(&self) -> usize {
        self.first.max_width + 2 + self.imag.as_ref().map_or(0, |f| f.max_width + 1)
    }
}

/// Row-major strides of a shape.
fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// The indices along a dim of size `n` that are shown: all, or the first and last
/// `EDGEITEMS` when summarizing a longer dim.
fn shown(n: usize, summarize: bool) -> Vec<usize> {
    if summarize && n > 2 * EDGEITEMS {
        (0..EDGEITEMS).chain(n - EDGEITEMS..n).collect()
    } else {
        (0..n).collect()
    }
}

/// `get_summarized_data`: the flat indices of the elements a summarized print shows
/// (every element when not summarizing).
fn shown_elements(
    shape: &[usize],
    strides: &[usize],
    base: usize,
    summarize: bool,
    out: &mut Vec<usize>,
) {
    match shape {
        [] => out.push(base),
        [n, rest @ ..] => {
            for i in shown(*n, summarize) {
                shown_elements(rest, &strides[1..], base + i * strides[0], summarize, out);
            }
        }
    }
}

/// The indices along each dim that a print of a tensor of this shape shows (all of
/// them unless it has more than `THRESHOLD` elements), so that a caller can read only
/// those: the sub-tensor they select, in row-major order, is what `format_tensor`
/// accepts in place of every element.
pub(crate) fn shown_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let summarize = lazyfuse_ir::shape::numel(shape) > THRESHOLD;
    shape.iter().map(|&n| shown(n, summarize)).collect()
}

/// The shape of the shown sub-tensor of a summarized print.
fn shown_shape(shape: &[usize]) -> Vec<usize> {
    shown_indices(shape).iter().map(Vec::len).collect()
}

/// `_tensor_str`: the bracketed body of a non-empty tensor. `compact`: `elems` holds
/// only the shown sub-tensor.
fn tensor_str(elems: &Elements, shape: &[usize], indent: usize, compact: bool) -> String {
    let numel: usize = shape.iter().product();
    let summarize = numel > THRESHOLD;
    let (strides, idx) = if compact {
        let sub = shown_shape(shape);
        (
            contiguous_strides(&sub),
            (0..sub.iter().product()).collect(),
        )
    } else {
        let strides = contiguous_strides(shape);
        let mut idx = Vec::new();
        shown_elements(shape, &strides, 0, summarize, &mut idx);
        (strides, idx)
    };
    let formatters = match elems {
        Elements::Text(v) => Formatters {
            first: Formatter::for_text(idx.iter().map(|&i| &v[i])),
            imag: None,
        },
        Elements::Real(v) => Formatters {
            first: Formatter::for_floats(idx.iter().map(|&i| v[i])),
            imag: None,
        },
        Elements::Complex(re, im) => Formatters {
            first: Formatter::for_floats(idx.iter().map(|&i| re[i])),
            imag: Some(Formatter::for_floats(idx.iter().map(|&i| im[i]))),
        },
    };
    let walk = Walk {
        elems,
        formatters: &formatters,
        summarize,
        compact,
    };
    walk.tensor(shape, &strides, 0, indent)
}

/// The recursive printer (`_tensor_str_with_formatter`).
struct Walk<'a> {
    elems: &'a Elements,
    formatters: &'a Formatters,
    summarize: bool,
    /// `elems` is the shown sub-tensor: address by position among the shown indices.
    compact: bool,
}

impl Walk<'_> {
    fn tensor(&self, shape: &[usize], strides: &[usize], base: usize, indent: usize) -> String {
        match shape {
            [] => self.formatters.element(self.elems, base),
            [n] => self.vector(*n, strides[0], base, indent),
            [n, rest @ ..] => {
                let mut slices = Vec::new();
                let rows = shown(*n, self.summarize);
                for (k, &i) in rows.iter().enumerate() {
                    if self.summarize && *n > 2 * EDGEITEMS && k == EDGEITEMS {
                        slices.push("...".to_string());
                    }
                    let at = if self.compact { k } else { i };
                    slices.push(self.tensor(
                        rest,
                        &strides[1..],
                        base + at * strides[0],
                        indent + 1,
                    ));
                }
                let sep = format!(
                    ",{}{}",
                    "\n".repeat(shape.len() - 1),
                    " ".repeat(indent + 1)
                );
                format!("[{}]", slices.join(&sep))
            }
        }
    }

    /// `_vector_str`: one innermost row, wrapped at the line width.
    fn vector(&self, n: usize, stride: usize, base: usize, indent: usize) -> String {
        let per_line = (LINEWIDTH.saturating_sub(indent) / self.formatters.element_length()).max(1);
        let mut data = Vec::new();
        let items = shown(n, self.summarize);
        for (k, &i) in items.iter().enumerate() {
            if self.summarize && n > 2 * EDGEITEMS && k == EDGEITEMS {
                data.push(" ...".to_string());
            }
            let at = if self.compact { k } else { i };
            data.push(self.formatters.element(self.elems, base + at * stride));
        }
        let lines: Vec<String> = data.chunks(per_line).map(|c| c.join(", ")).collect();
        format!(
            "[{}]",
            lines.join(&format!(",\n{}", " ".repeat(indent + 1)))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex;

    fn f32s(v: &[f32], shape: &[usize]) -> String {
        format_tensor(&Buffer::F32(v.to_vec()), shape, DType::F32)
    }

    #[test]
    fn float_matrix_and_vectors() {
        assert_eq!(
            f32s(&[1., 2., 3., 4.], &[2, 2]),
            "tensor([[1., 2.],\n        [3., 4.]])"
        );
        assert_eq!(f32s(&[0.1, 2.5], &[2]), "tensor([0.1000, 2.5000])");
        assert_eq!(f32s(&[-1.5, 2.25], &[2]), "tensor([-1.5000,  2.2500])");
        assert_eq!(f32s(&[0., 0.], &[2]), "tensor([0., 0.])");
        assert_eq!(f32s(&[1.5], &[]), "tensor(1.5000)");
        assert_eq!(f32s(&[3.], &[]), "tensor(3.)");
        assert_eq!(
            f32s(&[0.; 8], &[2, 2, 2]),
            "tensor([[[0., 0.],\n         [0., 0.]],\n\n        [[0., 0.],\n         [0., 0.]]])"
        );
    }

    #[test]
    fn scientific_notation() {
        assert_eq!(f32s(&[1e-5, 1.], &[2]), "tensor([1.0000e-05, 1.0000e+00])");
        assert_eq!(
            f32s(&[1., 10000.], &[2]),
            "tensor([1.0000e+00, 1.0000e+04])"
        );
        assert_eq!(f32s(&[1e9], &[1]), "tensor([1.0000e+09])");
        assert_eq!(f32s(&[0., 1e-5], &[2]), "tensor([0.0000e+00, 1.0000e-05])");
        // 1000x exactly is not "more than 1000".
        assert_eq!(f32s(&[1., 1000.], &[2]), "tensor([   1., 1000.])");
        let big = format_tensor(&Buffer::F64(vec![1e100, 1.]), &[2], DType::F32);
        assert_eq!(
            big,
            "tensor([1.0000e+100,  1.0000e+00], dtype=torch.float64)"
        );
    }

    #[test]
    fn non_finite() {
        assert_eq!(
            f32s(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY], &[3]),
            "tensor([nan, inf, -inf])"
        );
        assert_eq!(f32s(&[f32::NAN, 1.], &[2]), "tensor([nan, 1.])");
        assert_eq!(f32s(&[f32::NAN, 1.5], &[2]), "tensor([   nan, 1.5000])");
    }

    #[test]
    fn bools_and_ints() {
        assert_eq!(
            format_tensor(&Buffer::Bool(vec![true, false]), &[2], DType::F32),
            "tensor([ True, False])"
        );
        assert_eq!(
            format_tensor(&Buffer::Bool(vec![true]), &[], DType::F32),
            "tensor(True)"
        );
        assert_eq!(
            format_tensor(&Buffer::I64(vec![1, -10, 100]), &[3], DType::F32),
            "tensor([  1, -10, 100])"
        );
        assert_eq!(
            format_tensor(&Buffer::I32(vec![1, 2, 3]), &[3], DType::F32),
            "tensor([1, 2, 3], dtype=torch.int32)"
        );
        assert_eq!(
            format_tensor(&Buffer::U8(vec![7]), &[], DType::F32),
            "tensor(7, dtype=torch.uint8)"
        );
        // PyTorch puts the device before the dtype.
        assert_eq!(
            format_tensor_on(
                &Buffer::from_vec(vec![7u8]),
                &[],
                DType::F32,
                crate::Device::cuda(0)
            ),
            "tensor(7, device='cuda:0', dtype=torch.uint8)"
        );
        assert_eq!(
            format_tensor_on(
                &Buffer::from_vec(Vec::<f32>::new()),
                &[0, 2],
                DType::F32,
                crate::Device::cuda(1)
            ),
            "tensor([], device='cuda:1', size=(0, 2))"
        );
        assert_eq!(
            format_tensor(&Buffer::I64(vec![0, 1, 2, 3, 4, 5]), &[2, 3], DType::F32),
            "tensor([[0, 1, 2],\n        [3, 4, 5]])"
        );
    }

    #[test]
    fn dtype_suffixes() {
        assert_eq!(
            format_tensor(&Buffer::F64(vec![1., 2.]), &[2], DType::F32),
            "tensor([1., 2.], dtype=torch.float64)"
        );
        assert_eq!(
            format_tensor(&Buffer::F64(vec![1., 2.]), &[2], DType::F64),
            "tensor([1., 2.])"
        );
        assert_eq!(
            format_tensor(
                &Buffer::F16(vec![f16::from_f32(0.1), f16::from_f32(0.2)]),
                &[2],
                DType::F32
            ),
            "tensor([0.1000, 0.2000], dtype=torch.float16)"
        );
        assert_eq!(
            format_tensor(&Buffer::BF16(vec![bf16::from_f32(1.0)]), &[1], DType::F32),
            "tensor([1.], dtype=torch.bfloat16)"
        );
    }

    #[test]
    fn complex() {
        let c = Buffer::C64(vec![Complex::new(1., 2.), Complex::new(3., -1.)]);
        assert_eq!(
            format_tensor(&c, &[2], DType::F32),
            "tensor([1.+2.j, 3.-1.j])"
        );
        let c = Buffer::C128(vec![Complex::new(0.5, 0.25)]);
        assert_eq!(
            format_tensor(&c, &[], DType::F32),
            "tensor(0.5000+0.2500j, dtype=torch.complex128)"
        );
        // complex64 is the default complex dtype only when the default float is float32.
        let c = Buffer::C64(vec![Complex::new(1., 0.)]);
        assert_eq!(
            format_tensor(&c, &[1], DType::F64),
            "tensor([1.+0.j], dtype=torch.complex64)"
        );
        // complex32 is kept as raw bytes: two float16 parts per element.
        let mut bytes = Vec::new();
        for x in [1.0f32, -2.0] {
            bytes.extend_from_slice(&f16::from_f32(x).to_bits().to_le_bytes());
        }
        let c = Buffer::Raw {
            dtype: DType::C32,
            bytes,
        };
        assert_eq!(
            format_tensor(&c, &[1], DType::F32),
            "tensor([1.-2.j], dtype=torch.complex32)"
        );
    }

    #[test]
    fn empty() {
        assert_eq!(f32s(&[], &[0]), "tensor([])");
        assert_eq!(f32s(&[], &[0, 3]), "tensor([], size=(0, 3))");
        assert_eq!(
            format_tensor(&Buffer::I64(vec![]), &[0], DType::F32),
            "tensor([], dtype=torch.int64)"
        );
        assert_eq!(
            format_tensor(&Buffer::Bool(vec![]), &[2, 0], DType::F32),
            "tensor([], size=(2, 0), dtype=torch.bool)"
        );
    }

    #[test]
    fn line_wrapping() {
        let v: Vec<f32> = (0..10).map(|i| i as f32 / 3.0).collect();
        assert_eq!(
            f32s(&v, &[10]),
            "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n        3.0000])"
        );
    }

    #[test]
    fn summarization() {
        let v: Vec<i64> = (0..1001).collect();
        assert_eq!(
            format_tensor(&Buffer::I64(v), &[1001], DType::F32),
            "tensor([   0,    1,    2,  ...,  998,  999, 1000])"
        );
        let v: Vec<i64> = (0..2000).collect();
        assert_eq!(
            format_tensor(&Buffer::I64(v), &[2, 1000], DType::F32),
            "tensor([[   0,    1,    2,  ...,  997,  998,  999],\n        [1000, 1001, 1002,  ..., 1997, 1998, 1999]])"
        );
        // Summarized rows, and a width taken from the shown elements only.
        let v: Vec<i64> = (0..10000).collect();
        let s = format_tensor(&Buffer::I64(v), &[100, 100], DType::F32);
        assert_eq!(
            s,
            "tensor([[   0,    1,    2,  ...,   97,   98,   99],\n        \
             [ 100,  101,  102,  ...,  197,  198,  199],\n        \
             [ 200,  201,  202,  ...,  297,  298,  299],\n        \
             ...,\n        \
             [9700, 9701, 9702,  ..., 9797, 9798, 9799],\n        \
             [9800, 9801, 9802,  ..., 9897, 9898, 9899],\n        \
             [9900, 9901, 9902,  ..., 9997, 9998, 9999]])"
        );
    }

    #[test]
    fn python_number_formats() {
        assert_eq!(py_sci(1e-5), "1.0000e-05");
        assert_eq!(py_sci(-2.5e123), "-2.5000e+123");
        assert_eq!(py_fixed(0.125, 2), "0.12");
        assert_eq!(py_fixed(-0.0, 0), "-0");
        assert_eq!(py_tuple(&[0]), "(0,)");
        assert_eq!(py_tuple(&[2, 0, 3]), "(2, 0, 3)");
    }

    #[test]
    fn float8() {
        let f8 = |dtype: DType, values: &[f32], shape: &[usize]| {
            let format = Format::of(dtype).unwrap();
            let bytes = values.iter().map(|&v| format.encode(v)).collect();
            format_tensor(&Buffer::Raw { dtype, bytes }, shape, DType::F32)
        };
        assert_eq!(
            f8(DType::F8E4M3FN, &[1.0, -0.5, f32::NAN], &[3]),
            "tensor([ 1.0000, -0.5000,     nan], dtype=torch.float8_e4m3fn)"
        );
        // integer-valued: `1.` style, the width from the nonzero finite values only (as
        // PyTorch's); 1000 overflows to NaN in e4m3fn, to inf in e5m2
        assert_eq!(
            f8(DType::F8E4M3FN, &[1.0, 2.0, -0.0, 1000.0], &[2, 2]),
            "tensor([[1., 2.],\n        [-0., nan]], dtype=torch.float8_e4m3fn)"
        );
        assert_eq!(
            f8(DType::F8E5M2, &[1000.0, 1e6, -1e6], &[3]),
            "tensor([1024.,   inf,  -inf], dtype=torch.float8_e5m2)"
        );
        assert_eq!(
            f8(DType::F8E4M3FNUZ, &[0.3], &[]),
            "tensor(0.3125, dtype=torch.float8_e4m3fnuz)"
        );
        assert_eq!(
            // -0 is +0 in fnuz; 1e-5 rounds to the smallest subnormal, 2^-17
            f8(DType::F8E5M2FNUZ, &[-0.0, 1e-5], &[2]),
            "tensor([0.0000e+00, 7.6294e-06], dtype=torch.float8_e5m2fnuz)"
        );
        assert_eq!(
            f8(DType::F8E8M0FNU, &[1.0, 3.0, 0.25], &[3]),
            "tensor([1.0000, 4.0000, 0.2500], dtype=torch.float8_e8m0fnu)"
        );
        assert_eq!(
            format_tensor(
                &Buffer::Raw {
                    dtype: DType::F8E5M2,
                    bytes: vec![]
                },
                &[0],
                DType::F32
            ),
            "tensor([], dtype=torch.float8_e5m2)"
        );
    }
}
