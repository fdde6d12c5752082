//! Replays every case of the PyTorch 2.15 view corpus (`tests/data/conformance/views.jsonl`,
//! schema in the corpus README §6) on `Layout` and a model storage, checking strictly:
//! each step's shape, strides (size-1 dims and empty tensors included), storage offset,
//! contiguity and aliasing; the values read through the final view; failing ops; and
//! writes through views (which must reach the base, or not when a copy intervened).
//!
//! Copies (`contiguous`, and `reshape`/`flatten` where no view exists) are emulated as
//! the facade makes them: a new storage holding the values in row-major order, with
//! `Layout::contiguous` over it; later `as_strided` steps address that storage.

use lazyfuse_ir::{Error, Layout};
use serde_json::Value;
use std::path::PathBuf;

/// A tensor in the model: a layout over one of the model's storages (0 = the base).
#[derive(Clone, Debug)]
struct Tensor {
    layout: Layout,
    storage: usize,
}

/// Every storage of one case; index 0 is the base, `arange(numel)`.
struct Model {
    storages: Vec<Vec<i64>>,
}

impl Model {
    fn read(&self, t: &Tensor) -> Vec<i64> {
        let s = &self.storages[t.storage];
        t.layout.offsets().map(|o| s[o]).collect()
    }

    /// A row-major copy into a new storage, as `contiguous()`/a copying `reshape` does.
    fn copy(&mut self, t: &Tensor, shape: Vec<usize>) -> Tensor {
        let values = self.read(t);
        assert_eq!(values.len(), shape.iter().product::<usize>());
        self.storages.push(values);
        Tensor {
            layout: Layout::contiguous(&shape),
            storage: self.storages.len() - 1,
        }
    }

    /// An in-place write through `t`, with PyTorch's refusal of arithmetic on
    /// internally overlapping destinations.
    fn write(&mut self, t: &Tensor, op: &str, args: &Value) -> Result<(), String> {
        let f: Box<dyn Fn(i64) -> i64> = match op {
            "add_" => {
                let v = int(args, "other")? as i64;
                Box::new(move |x| x + v)
            }
            "mul_" => {
                let v = int(args, "other")? as i64;
                Box::new(move |x| x * v)
            }
            "fill_" => {
                let v = int(args, "value")? as i64;
                Box::new(move |_| v)
            }
            other => return Err(format!("harness: unknown write op {other}")),
        };
        if op != "fill_" && t.layout.has_internal_overlap() {
            return Err(Error::InternalOverlap.to_string());
        }
        let offsets: Vec<usize> = t.layout.offsets().collect();
        let s = &mut self.storages[t.storage];
        if op == "fill_" {
            for o in offsets {
                s[o] = f(s[o]);
            }
        } else {
            // Read everything first, as an elementwise kernel over a non-overlapping
            // destination would.
            let new: Vec<i64> = offsets.iter().map(|&o| f(s[o])).collect();
            for (o, v) in offsets.into_iter().zip(new) {
                s[o] = v;
            }
        }
        Ok(())
    }
}

fn int(args: &Value, key: &str) -> Result<isize, String> {
    args.get(key)
        .and_then(Value::as_i64)
        .map(|v| v as isize)
        .ok_or_else(|| format!("harness: missing int arg {key} in {args}"))
}

fn opt_int(args: &Value, key: &str) -> Result<Option<isize>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => int(args, key).map(Some),
    }
}

fn ints(args: &Value, key: &str) -> Result<Vec<isize>, String> {
    args.get(key)
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(|v| v.as_i64().map(|x| x as isize)).collect())
        .ok_or_else(|| format!("harness: missing int list {key} in {args}"))
}

/// A non-negative argument; PyTorch refuses negative sizes/steps/offsets, so a
/// negative one is the op's failure, not the harness's.
fn nonneg(v: isize, what: &str) -> Result<usize, Error> {
    usize::try_from(v)
        .map_err(|_| Error::invalid(what, format!("{what} must be non-negative, got {v}")))
}

/// Outcome of one step: the op's own refusal (`Op`) or a harness problem (`Harness`,
/// e.g. an op name this harness does not know: that must fail the case, not skip it).
enum StepErr {
    Op(Error),
    Harness(String),
}

impl From<Error> for StepErr {
    fn from(e: Error) -> Self {
        StepErr::Op(e)
    }
}

impl From<String> for StepErr {
    fn from(e: String) -> Self {
        StepErr::Harness(e)
    }
}

fn pick(pieces: Vec<Layout>, index: isize) -> Result<Layout, StepErr> {
    usize::try_from(index)
        .ok()
        .and_then(|i| pieces.get(i).cloned())
        .ok_or_else(|| StepErr::Harness(format!("piece index {index} of {}", pieces.len())))
}

/// Applies one view step to `t`; copies get a new storage in `model`.
fn apply(model: &mut Model, t: &Tensor, op: &str, args: &Value) -> Result<Tensor, StepErr> {
    let l = &t.layout;
    let same = |layout: Layout| Tensor {
        layout,
        storage: t.storage,
    };
    let out = match op {
        "view" => same(l.view(&ints(args, "shape")?)?),
        "reshape" => {
            let shape = ints(args, "shape")?;
            match l.reshape(&shape)? {
                Some(v) => same(v),
                None => {
                    let s = Layout::infer_shape(&shape, l.numel())?;
                    model.copy(t, s)
                }
            }
        }
        "transpose" => same(l.transpose(int(args, "dim0")?, int(args, "dim1")?)?),
        "swapaxes" => same(l.transpose(int(args, "axis0")?, int(args, "axis1")?)?),
        "permute" => same(l.permute(&ints(args, "dims")?)?),
        "expand" => same(l.expand(&ints(args, "shape")?)?),
        "expand_as" => same(l.expand(&ints(args, "other_shape")?)?),
        "narrow" => {
            let len = nonneg(int(args, "length")?, "narrow(): length")?;
            same(l.narrow(int(args, "dim")?, int(args, "start")?, len)?)
        }
        "select" => same(l.select(int(args, "dim")?, int(args, "index")?)?),
        "slice" => {
            let step = nonneg(int(args, "step")?, "slice step")?;
            same(l.slice(
                int(args, "dim")?,
                opt_int(args, "start")?,
                opt_int(args, "stop")?,
                step,
            )?)
        }
        "squeeze" => match opt_int(args, "dim")? {
            None => same(l.squeeze()),
            Some(d) => same(l.squeeze_dim(d)?),
        },
        "unsqueeze" => same(l.unsqueeze(int(args, "dim")?)?),
        "diagonal" => {
            same(l.diagonal(int(args, "offset")?, int(args, "dim1")?, int(args, "dim2")?)?)
        }
        "as_strided" => {
            let size = ints(args, "size")?
                .into_iter()
                .map(|s| nonneg(s, "as_strided size"))
                .collect::<Result<Vec<_>, _>>()?;
            let offset = nonneg(int(args, "storage_offset")?, "storage offset")?;
            let numel = model.storages[t.storage].len();
            same(l.as_strided(&size, &ints(args, "stride")?, offset, numel)?)
        }
        "unfold" => {
            let size = nonneg(int(args, "size")?, "unfold size")?;
            let step = nonneg(int(args, "step")?, "unfold step")?;
            same(l.unfold(int(args, "dimension")?, size, step)?)
        }
        "movedim" => same(l.movedim(int(args, "source")?, int(args, "destination")?)?),
        "t" => same(l.t()?),
        "T" => {
            if l.ndim() != 2 {
                return Err(StepErr::Harness("T is only used on 2-D tensors".into()));
            }
            same(l.t()?)
        }
        "mT" => same(l.mt()?),
        "flatten" => {
            let (s, e) = (int(args, "start_dim")?, int(args, "end_dim")?);
            match l.flatten(s, e)? {
                Some(v) => same(v),
                None => {
                    let shape = l.flatten_shape(s, e)?;
                    model.copy(t, shape)
                }
            }
        }
        "unflatten" => same(l.unflatten(int(args, "dim")?, &ints(args, "sizes")?)?),
        "split" => {
            let dim = int(args, "dim")?;
            let pieces = match args.get("split_size_or_sections") {
                Some(Value::Array(_)) => {
                    let sizes = ints(args, "split_size_or_sections")?
                        .into_iter()
                        .map(|s| nonneg(s, "split size"))
                        .collect::<Result<Vec<_>, _>>()?;
                    l.split_sizes(&sizes, dim)?
                }
                _ => {
                    let size = nonneg(int(args, "split_size_or_sections")?, "split_size")?;
                    l.split(size, dim)?
                }
            };
            same(pick(pieces, int(args, "index")?)?)
        }
        "chunk" => {
            let chunks = nonneg(int(args, "chunks")?, "chunks")?;
            let pieces = l.chunk(chunks, int(args, "dim")?)?;
            same(pick(pieces, int(args, "index")?)?)
        }
        "unbind" => {
            let pieces = l.unbind(int(args, "dim")?)?;
            same(pick(pieces, int(args, "index")?)?)
        }
        "contiguous" => {
            if l.is_contiguous() {
                t.clone()
            } else {
                let shape = l.shape.clone();
                model.copy(t, shape.to_vec())
            }
        }
        other => return Err(StepErr::Harness(format!("unknown view op {other}"))),
    };
    Ok(out)
}

fn usizes(v: &Value) -> Option<Vec<usize>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_u64().map(|u| u as usize))
        .collect()
}

fn isizes(v: &Value) -> Option<Vec<isize>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_i64().map(|u| u as isize))
        .collect()
}

fn i64s(v: &Value) -> Option<Vec<i64>> {
    v.as_array()?.iter().map(Value::as_i64).collect()
}

/// Replays a chain of step records from `start`, checking each record strictly.
fn replay(model: &mut Model, start: Tensor, steps: &Value, what: &str) -> Result<Tensor, String> {
    let mut t = start;
    let steps = steps
        .as_array()
        .ok_or_else(|| format!("{what}: steps is not a list"))?;
    for (i, step) in steps.iter().enumerate() {
        let op = step["op"].as_str().ok_or("step without op")?;
        let args = &step["args"];
        t = match apply(model, &t, op, args) {
            Ok(t) => t,
            Err(StepErr::Op(e)) => return Err(format!("{what} step {i} {op}{args}: Err({e})")),
            Err(StepErr::Harness(e)) => return Err(format!("{what} step {i} {op}: harness: {e}")),
        };
        let got = (
            t.layout.shape.to_vec(),
            t.layout.strides.to_vec(),
            t.layout.offset,
            t.layout.is_contiguous(),
            t.storage == 0,
        );
        let want = (
            usizes(&step["shape"]).ok_or("bad shape")?,
            isizes(&step["strides"]).ok_or("bad strides")?,
            step["storage_offset"].as_u64().ok_or("bad offset")? as usize,
            step["is_contiguous"].as_bool().ok_or("bad is_contiguous")?,
            step["shares_storage_with_base"]
                .as_bool()
                .ok_or("bad shares_storage_with_base")?,
        );
        if got != want {
            return Err(format!(
                "{what} step {i} {op}{args}: got (shape, strides, offset, contiguous, shares) {got:?}, want {want:?}"
            ));
        }
    }
    Ok(t)
}

fn check_values(got: &[i64], want: &Value, what: &str) -> Result<(), String> {
    let want = i64s(want).ok_or_else(|| format!("{what}: not an int list"))?;
    if got != want.as_slice() {
        return Err(format!("{what}: got {got:?}, want {want:?}"));
    }
    Ok(())
}

fn run_case(case: &Value) -> Result<(), String> {
    let base_shape = usizes(&case["base_shape"]).ok_or("bad base_shape")?;
    let numel: usize = base_shape.iter().product();
    let mut model = Model {
        storages: vec![(0..numel as i64).collect()],
    };
    let base = Tensor {
        layout: Layout::contiguous(&base_shape),
        storage: 0,
    };
    let family = case["family"].as_str().unwrap_or("");
    let known = [
        "chain",
        "view_on_noncontiguous",
        "reshape_on_noncontiguous",
        "write_through_view",
        "write_to_expanded",
        "cross_view_write",
        "overlap_fill",
    ];
    if !known.contains(&family) {
        return Err(format!("harness: unknown family {family}"));
    }
    let t = replay(&mut model, base.clone(), &case["steps"], "steps")?;
    let observer = match case.get("observer_steps") {
        Some(steps) => Some(replay(&mut model, base.clone(), steps, "observer_steps")?),
        None => None,
    };

    if let Some(err) = case.get("error") {
        let op = err["op"].as_str().ok_or("error without op")?;
        return match apply(&mut model, &t, op, &err["args"]) {
            Err(StepErr::Op(_)) => Ok(()),
            Err(StepErr::Harness(e)) => Err(format!("error op {op}: harness: {e}")),
            Ok(r) => Err(format!(
                "error op {op}{} succeeded with {} (want {})",
                err["args"], r.layout, err["message"]
            )),
        };
    }

    if let Some(write) = case.get("write") {
        let op = write["op"].as_str().ok_or("write without op")?;
        let result = model.write(&t, op, &write["args"]);
        if case.get("write_error").is_some() {
            return match result {
                Err(e) if !e.starts_with("harness") => Ok(()),
                Err(e) => Err(e),
                Ok(()) => Err(format!(
                    "write {op} succeeded, want {}",
                    case["write_error"]
                )),
            };
        }
        result.map_err(|e| format!("write {op}: {e}"))?;
        check_values(&model.read(&t), &case["view_after"], "view_after")?;
        check_values(&model.read(&base), &case["base_after"], "base_after")?;
        if let Some(obs) = observer {
            check_values(&model.read(&obs), &case["observer_after"], "observer_after")?;
        }
        return Ok(());
    }

    let values = case
        .get("values")
        .ok_or("case without values/error/write")?;
    let got = model.read(&t);
    if t.layout.required_storage() > model.storages[t.storage].len() {
        return Err(format!("final layout {} exceeds its storage", t.layout));
    }
    check_values(&got, values, "values")
}

#[test]
fn views_conformance() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/conformance/views.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut checked = 0;
    let mut failures = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let case: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: bad JSON: {e}", n + 1));
        let id = case["id"].as_str().unwrap_or("?").to_string();
        checked += 1;
        if let Err(e) = run_case(&case) {
            failures.push(format!("{id}: {e}"));
        }
    }
    println!(
        "views conformance: {checked} cases checked, {} failed",
        failures.len()
    );
    assert_eq!(checked, 1230, "the corpus has 1230 cases");
    assert!(
        failures.is_empty(),
        "{} of {checked} view cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
