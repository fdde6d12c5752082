//! Reductions and scans in CUDA C: accumulator types and identities, the update
//! rules (ties of argmax/argmin, NaN propagation, Neumaier-compensated sums), the
//! combination of a block's partial accumulators, and the running values of scans.

use super::emit::Emit;
use super::{combine, reg, rep, round, start, unsupported, Rep};
use crate::semantics;
use crate::CodegenError;
use lazyfuse_ir::kernel::{Accum, ScanAccum};
use lazyfuse_ir::DType;

impl Emit<'_> {
    /// Combines the block's partial accumulators of phase `phase`'s reductions.
    pub(super) fn combine_accs(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xdt = self.dtype(x.0 as usize);
            let ty = Self::acc_type(op, xdt)?;
            let r = rep(xdt)?;
            let f = combine(op, r, xdt, "x", "y")
                .ok_or_else(|| unsupported(format!("a block reduction {op:?}"), xdt))?;
            self.line(format!("__shared__ {ty} sm{i}[32];"));
            self.line(format!(
                "a{i} = lf_block_reduce(a{i}, []({ty} x, {ty} y) {{ return ({ty}){f}; }}, sm{i});"
            ));
        }
        Ok(())
    }

    /// The C type a reduction of `xdt` values accumulates in.
    pub(super) fn acc_type(op: Accum, xdt: DType) -> Result<&'static str, CodegenError> {
        match semantics::accumulator(op, xdt) {
            Some(acc) => Ok(reg(rep(acc)?)),
            None => Err(unsupported(format!("reduce {op:?}"), xdt)),
        }
    }

    pub(super) fn init_accs(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xdt = self.dtype(x.0 as usize);
            let ty = Self::acc_type(op, xdt)?;
            let init = start(semantics::identity(op, xdt), ty);
            self.line(format!("{ty} a{i} = {init};"));
            if self.compensated(op, xdt) {
                self.line(format!("{ty} c{i} = ({ty})0;"));
            }
            if matches!(op, Accum::ArgMax | Accum::ArgMin) {
                self.line(format!("i64 ai{i} = 0;"));
            }
        }
        Ok(())
    }

    pub(super) fn compensated(&self, op: Accum, xdt: DType) -> bool {
        semantics::compensated(op, xdt, self.math)
    }

    /// The reduction's value after its loop (the expression's value in its dtype).
    pub(super) fn finish_acc(
        &mut self,
        i: usize,
        op: Accum,
        xi: usize,
    ) -> Result<String, CodegenError> {
        let xdt = self.dtype(xi);
        if matches!(op, Accum::ArgMax | Accum::ArgMin) {
            return Ok(format!("ai{i}"));
        }
        let mut v = format!("a{i}");
        if self.compensated(op, xdt) {
            // s + c, except where that is NaN from an infinite s: then s.
            let ty = Self::acc_type(op, xdt)?;
            self.line(format!("const {ty} s{i} = a{i} + c{i};"));
            v = format!("((s{i} != s{i} && a{i} == a{i}) ? a{i} : s{i})");
        }
        Ok(if op == Accum::Sum && self.dtype(i) == DType::F32 {
            format!("(float){v}")
        } else {
            v
        })
    }

    /// The C type of a scan's running value over `xdt` values
    /// ([`semantics::scan_state`]).
    pub(super) fn scan_type(op: ScanAccum, xdt: DType) -> Result<&'static str, CodegenError> {
        Ok(reg(rep(semantics::scan_state(op, xdt))?))
    }

    pub(super) fn init_scans(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_scans(phase) {
            if !self.needed[i] {
                continue;
            }
            let (xdt, dt) = (self.dtype(x.0 as usize), self.dtype(i));
            if op.output_dtype(xdt) != Some(dt) {
                return Err(unsupported(format!("scan {op:?}"), xdt));
            }
            let ty = Self::scan_type(op, xdt)?;
            let init = start(semantics::scan_start(op, xdt), ty);
            self.line(format!("{ty} a{i} = {init};"));
            if matches!(op, ScanAccum::ArgMax | ScanAccum::ArgMin) {
                self.line(format!("i64 ai{i} = 0;"));
            }
        }
        Ok(())
    }

    pub(super) fn scan_step(
        &mut self,
        i: usize,
        op: ScanAccum,
        xi: usize,
    ) -> Result<(), CodegenError> {
        let xdt = self.dtype(xi);
        let dt = self.dtype(i);
        let r = rep(xdt)?;
        let v = format!("v{xi}");
        let a = format!("a{i}");
        let float = matches!(r, Rep::F32 | Rep::F64);
        let out_ty = reg(rep(dt)?);
        match op {
            ScanAccum::Sum | ScanAccum::Prod => {
                let sym = if op == ScanAccum::Sum { "+" } else { "*" };
                let next = if float {
                    let w = if xdt == DType::F32 {
                        format!("(double){v}")
                    } else {
                        v.clone()
                    };
                    format!("{a} {sym} {w}")
                } else if let Rep::Int { c, .. } = r {
                    format!("({c})((u64){a} {sym} (u64){v})")
                } else {
                    return Err(unsupported(format!("scan {op:?}"), xdt));
                };
                self.line(format!("{a} = {next};"));
                let out = if xdt == DType::F32 {
                    format!("(float){a}")
                } else {
                    round(a.clone(), xdt)
                };
                self.line(format!("const {out_ty} v{i} = {out};"));
            }
            ScanAccum::Max | ScanAccum::Min | ScanAccum::ArgMax | ScanAccum::ArgMin => {
                let wins = replaces(semantics::scan_rule(op), &v, &a, float);
                self.line(format!("const bool t{i} = pos == 0 || {wins};"));
                self.line(format!("if (t{i}) {a} = {v};"));
                if matches!(op, ScanAccum::ArgMax | ScanAccum::ArgMin) {
                    self.line(format!("if (t{i}) ai{i} = pos;"));
                    self.line(format!("const i64 v{i} = ai{i};"));
                } else {
                    self.line(format!("const {out_ty} v{i} = {a};"));
                }
            }
            ScanAccum::LogAddExp => {
                let w = if r == Rep::F64 {
                    v.clone()
                } else {
                    format!("(double){v}")
                };
                self.line(format!("{a} = lf_scan_log_add_exp({w}, {a});"));
                let out = if r == Rep::F64 {
                    a.clone()
                } else {
                    round(format!("(float){a}"), xdt)
                };
                self.line(format!("const {out_ty} v{i} = {out};"));
            }
        }
        Ok(())
    }

    /// Folds the current reduction point into phase `phase`'s accumulators.
    pub(super) fn fold_accs(&mut self, phase: u32) -> Result<(), CodegenError> {
        for (i, op, x) in self.k.phase_reductions(phase) {
            if !self.needed[i] {
                continue;
            }
            let xi = x.0 as usize;
            let xdt = self.dtype(xi);
            let r = rep(xdt)?;
            let v = format!("v{xi}");
            let a = format!("a{i}");
            let float = matches!(r, Rep::F32 | Rep::F64);
            let next = match (op, r) {
                (Accum::Sum, _) if float => {
                    let w = if xdt == DType::F32 {
                        format!("(double){v}")
                    } else {
                        v.clone()
                    };
                    if self.compensated(op, xdt) {
                        // Neumaier: the add's rounding error joins c, taken from the
                        // operand of larger magnitude (interp::reduce::sum).
                        let ty = Self::acc_type(op, xdt)?;
                        self.open("");
                        self.line(format!("const {ty} x = {w};"));
                        self.line(format!("const {ty} t = {a} + x;"));
                        self.line(format!(
                            "c{i} += lf_fabs({a}) >= lf_fabs(x) ? ({a} - t) + x : (x - t) + {a};"
                        ));
                        self.line(format!("{a} = t;"));
                        self.close();
                        continue;
                    }
                    // (float32 values widened into the double accumulator)
                    combine(op, r, xdt, &a, &w).expect("float sums combine")
                }
                (Accum::ArgMax | Accum::ArgMin, _) => {
                    let better = replaces(semantics::arg_reduce_rule(op), &v, &a, float);
                    self.open("");
                    self.line(format!("const bool take = pos == 0 || {better};"));
                    self.line(format!("if (take) {{ {a} = {v}; ai{i} = pos; }}"));
                    self.close();
                    continue;
                }
                _ => combine(op, r, xdt, &a, &v)
                    .ok_or_else(|| unsupported(format!("reduce {op:?}"), xdt))?,
            };
            self.line(format!("{a} = {next};"));
        }
        Ok(())
    }
}

/// Whether candidate `x` replaces the running `best` under `rule` (the first
/// position aside), as a C condition. Floats: `x` beats `best` (`>`, or `>=` where
/// ties replace) or `x` is NaN, and, where a NaN best stays, `best` is not NaN (an
/// ordered compare with a NaN is false). Integers and bools: the compare alone.
fn replaces(rule: semantics::Replace, x: &str, best: &str, float: bool) -> String {
    let cmp = match (rule.max, rule.ties) {
        (true, false) => ">",
        (true, true) => ">=",
        (false, false) => "<",
        (false, true) => "<=",
    };
    match (float, rule.nan_stays) {
        (false, _) => format!("({x} {cmp} {best})"),
        (true, false) => format!("({x} {cmp} {best} || {x} != {x})"),
        (true, true) => format!("(({x} {cmp} {best} || {x} != {x}) && {best} == {best})"),
    }
}
