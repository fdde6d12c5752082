//! Property tests through the public API: random chains of view ops over a random
//! base; every element read through the view (realized by the interpreter) equals
//! the base element its index maps to, and a write through the view lands exactly on
//! those base elements.

#[path = "support/cases.rs"]
mod cases;
use lazyfuse::{DType, Tensor};
use proptest::prelude::*;

/// One view op with raw parameters; applied modulo the current shape.
#[derive(Clone, Debug)]
enum Step {
    Transpose(usize, usize),
    Select(usize, usize),
    Slice(usize, usize, usize),
    Unsqueeze(usize),
    Expand(usize),
    Flip2,
    Diagonal,
    Unfold(usize, usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..4usize, 0..4usize).prop_map(|(a, b)| Step::Transpose(a, b)),
        (0..4usize, 0..4usize).prop_map(|(d, i)| Step::Select(d, i)),
        (0..4usize, 0..3usize, 1..3usize).prop_map(|(d, s, st)| Step::Slice(d, s, st)),
        (0..5usize).prop_map(Step::Unsqueeze),
        (2..4usize).prop_map(Step::Expand),
        Just(Step::Flip2),
        Just(Step::Diagonal),
        (0..4usize, 1..3usize).prop_map(|(d, s)| Step::Unfold(d, s)),
    ]
}

/// Applies a step to a tensor view and, in parallel, to an explicit array of base
/// indices (the naive model). Returns None when the step does not apply.
fn apply(t: &Tensor, model: &Tensor, s: &Step) -> Option<(Tensor, Tensor)> {
    let nd = t.ndim();
    let both = |f: &dyn Fn(&Tensor) -> lazyfuse::Result<Tensor>| Some((f(t).ok()?, f(model).ok()?));
    match *s {
        Step::Transpose(a, b) if nd > 0 => {
            both(&|x| x.transpose((a % nd) as isize, (b % nd) as isize))
        }
        Step::Select(d, i) if nd > 0 => {
            let d = d % nd;
            let size = t.shape()[d];
            if size == 0 {
                return None;
            }
            both(&|x| x.select(d as isize, (i % size) as isize))
        }
        Step::Slice(d, start, step) if nd > 0 => {
            both(&|x| x.slice((d % nd) as isize, Some(start as isize), None, step))
        }
        Step::Unsqueeze(d) => both(&|x| x.unsqueeze((d % (nd + 1)) as isize)),
        Step::Expand(n) => {
            let mut shape: Vec<isize> = vec![n as isize];
            shape.extend(t.shape().iter().map(|&s| s as isize));
            both(&|x| x.expand(&shape))
        }
        Step::Flip2 if nd >= 2 => both(&|x| x.mt()),
        Step::Diagonal if nd >= 2 => both(&|x| x.diagonal(0, 0, 1)),
        Step::Unfold(d, size) if nd > 0 => {
            let d = d % nd;
            if t.shape()[d] < size {
                return None;
            }
            both(&|x| x.unfold(d as isize, size, 1))
        }
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases::cases(96)))]

    #[test]
    fn reads_and_writes_through_view_chains(
        shape in proptest::collection::vec(1..4usize, 1..4),
        steps in proptest::collection::vec(step(), 1..5),
    ) {
        lazyfuse::set_verify(true);
        let numel: usize = shape.iter().product();
        let shape_i: Vec<isize> = shape.iter().map(|&s| s as isize).collect();
        let base = Tensor::arange(0.0, numel as f64, 1.0, DType::I64).unwrap().view(&shape_i).unwrap();
        // The model: the same view chain applied to an independent tensor whose values
        // are the base indices; its values are where each view element must come from.
        let model_base = Tensor::arange(0.0, numel as f64, 1.0, DType::I64).unwrap().view(&shape_i).unwrap();
        let (mut view, mut model) = (base.clone(), model_base);
        for s in &steps {
            if let Some((v, m)) = apply(&view, &model, s) {
                view = v;
                model = m;
            }
        }
        let read = view.to_vec::<i64>().unwrap();
        let index = model.contiguous().unwrap().to_vec::<i64>().unwrap();
        prop_assert_eq!(&read, &index, "read through the view equals the base at the mapped index");
        prop_assert!(view.shares_storage(&base));

        // A write through the view: fill_ is allowed even on expanded views; every
        // addressed base element becomes -1 and no other element changes.
        view.fill_(-1i64).unwrap();
        let after = base.to_vec::<i64>().unwrap();
        for (i, v) in after.iter().enumerate() {
            let addressed = index.contains(&(i as i64));
            prop_assert_eq!(*v == -1, addressed, "base element {} after the write", i);
        }
    }
}
