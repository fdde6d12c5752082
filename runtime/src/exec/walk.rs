//! The one walk of a schedule's steps that both executors run: the CPU's over host
//! buffers ([`super::run_compiled`]) and the device's over device arrays
//! ([`crate::resident::run`]). The walk owns what they share: the inputs checked
//! before a donated buffer is taken, the buffer slots, each step timed, dead
//! temporaries released after their last reader, donations given back unwritten on an
//! error, and the outputs collected. An [`Executor`] owns the memory: how a loop
//! kernel runs there, how an extern step's values reach the host routine and return,
//! and what is left to wait for at the end.

use super::{
    dead_temps, extern_on_host, step_buffers, unwritten_donations, Code, CompiledSchedule,
    RunStats, StepTiming,
};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use lazyfuse_ir::kernel::{BufDecl, BufKind, ExternStep, LoopKernel, Schedule, Step};
use lazyfuse_ir::InputId;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A run's buffer slots, by buffer index: empty until a step writes it.
pub(crate) type Slots<A> = [Option<Arc<A>>];

/// The memory a schedule runs in, and how its steps run there.
pub(crate) trait Executor {
    /// A buffer in this memory.
    type Array;
    /// Refuses an input this memory cannot read (another device's array).
    fn check_input(&self, a: &Self::Array) -> Result<()>;
    /// An array of `decl` with no elements: a buffer no step writes.
    fn empty(&self, decl: &BufDecl) -> Result<Self::Array>;
    /// Where `a`'s elements are: a donated array still there after the run was
    /// written in place.
    fn address(a: &Arc<Self::Array>) -> *const u8;
    /// Runs loop step `i`, kernel `k`, with `code`; returns the bytes of its params.
    fn run_loop(
        &mut self,
        schedule: &Schedule,
        i: usize,
        k: &LoopKernel,
        code: &Code,
        slots: &mut Slots<Self::Array>,
    ) -> Result<u64>;
    /// Runs extern step `e` in this memory when it can (cuBLAS on a device): its name
    /// and bytes; `None` sends it to the host routine.
    fn run_extern_here(
        &mut self,
        schedule: &Schedule,
        e: &ExternStep,
        slots: &mut Slots<Self::Array>,
    ) -> Result<Option<(String, u64)>>;
    /// What must happen before the host reads values written here (on a device, the
    /// status of every kernel launched so far, whose errors come first).
    fn before_host(&mut self, schedule: &Schedule) -> Result<()>;
    /// `a`'s values on the host.
    fn download(&self, a: &Arc<Self::Array>) -> Result<Arc<Buffer>>;
    /// A host buffer's values in this memory.
    fn upload(&self, b: Arc<Buffer>) -> Result<Arc<Self::Array>>;
    /// A temporary after its last reader.
    fn release(&mut self, a: Arc<Self::Array>);
    /// After the last step: what is still in flight, waited for and checked.
    fn finish(&mut self, schedule: &Schedule) -> Result<()>;
}

/// Runs `schedule`'s steps in `exec`'s memory with the kernels of `compiled`.
/// `inputs` holds the arrays its `BufKind::Input` buffers name; `donated` holds
/// arrays the caller gave up (see [`super::run_compiled`]). The result holds one
/// array per target.
pub(crate) fn walk<E: Executor>(
    schedule: &Schedule,
    compiled: &CompiledSchedule,
    exec: &mut E,
    inputs: &HashMap<InputId, Arc<E::Array>>,
    donated: &mut HashMap<InputId, Arc<E::Array>>,
    mut stats: RunStats,
) -> Result<(Vec<Arc<E::Array>>, RunStats)> {
    if compiled.steps() != schedule.steps.len() {
        return Err(Error::Malformed(format!(
            "{} compiled entries for {} steps",
            compiled.steps(),
            schedule.steps.len()
        )));
    }
    let run_start = stats.timed.then(Instant::now);
    // The step after which each temporary is dead.
    let mut last_use: Vec<usize> = lazyfuse_ir::shape::filled(0, schedule.buffers.len());
    for (i, step) in schedule.steps.iter().enumerate() {
        for b in step_buffers(step) {
            last_use[b.0 as usize] = i;
        }
    }
    // Every input checked before a donated array is taken (an error gives it back).
    for decl in &schedule.buffers {
        if let BufKind::Input(id) | BufKind::Donated(id) = decl.kind {
            let a = inputs
                .get(&id)
                .or_else(|| donated.get(&id))
                .ok_or_else(|| Error::Malformed(format!("input {id} was not provided")))?;
            exec.check_input(a)?;
        }
    }
    let mut slots: Vec<Option<Arc<E::Array>>> = Vec::with_capacity(schedule.buffers.len());
    // The donated arrays taken, by slot, with their elements' address: one still
    // there at the end was written in place.
    let mut taken: Vec<(usize, *const u8)> = Vec::new();
    for decl in &schedule.buffers {
        let slot = match decl.kind {
            // A donated array the map lacks is read from `inputs` and copied before
            // its first write, as any shared one; an input the schedule only reads
            // may be in either map.
            BufKind::Input(id) | BufKind::Donated(id) => {
                let own = match decl.kind {
                    BufKind::Donated(_) => donated.remove(&id),
                    _ => None,
                };
                if let Some(a) = &own {
                    taken.push((slots.len(), E::address(a)));
                }
                own.or_else(|| inputs.get(&id).or_else(|| donated.get(&id)).cloned())
            }
            // An empty buffer needs no writer: a `cat` of empty tensors has no step,
            // and its readers still read it.
            BufKind::Output(_) | BufKind::Temp if decl.len == 0 => match exec.empty(decl) {
                Ok(a) => Some(Arc::new(a)),
                Err(e) => {
                    give_back_unwritten(schedule, None, &mut slots, donated);
                    return Err(e);
                }
            },
            BufKind::Output(_) | BufKind::Temp => None,
        };
        slots.push(slot);
    }
    for (i, step) in schedule.steps.iter().enumerate() {
        let t0 = stats.timed.then(Instant::now);
        let done = match step {
            Step::Loop(k) => compiled
                .entry(i)
                .ok_or_else(|| Error::Malformed(format!("kernel {} was not compiled", k.name)))
                .and_then(|code| exec.run_loop(schedule, i, k, code, &mut slots))
                .map(|bytes| (stats.timed.then(|| k.name.clone()), bytes)),
            Step::Extern(e) => run_extern(schedule, e, compiled, exec, &mut slots)
                .map(|(name, bytes)| (Some(name), bytes)),
        };
        let (name, bytes) = match done {
            Ok(x) => x,
            Err(err) => {
                give_back_unwritten(schedule, Some(i), &mut slots, donated);
                return Err(err);
            }
        };
        // On a device a step's time is its launch (kernels run asynchronously; the
        // run's total waits for them).
        if let (Some(t0), Some(name)) = (t0, name) {
            stats.steps.push(StepTiming {
                name,
                time: t0.elapsed(),
                bytes,
            });
        }
        for idx in dead_temps(schedule, &last_use, i, step) {
            if let Some(a) = slots[idx].take() {
                exec.release(a);
            }
        }
    }
    if let Err(err) = exec.finish(schedule) {
        let last = schedule.steps.len().checked_sub(1);
        give_back_unwritten(schedule, last, &mut slots, donated);
        return Err(err);
    }
    stats.kernels = schedule.steps.len();
    stats.in_place = taken
        .iter()
        .filter(|(idx, at)| slots[*idx].as_ref().is_some_and(|a| E::address(a) == *at))
        .count();
    let outs = schedule
        .outputs
        .iter()
        .map(|b| match slots.get(b.0 as usize) {
            Some(Some(a)) => Ok(a.clone()),
            _ => Err(Error::Malformed(format!("output {b} was never written"))),
        })
        .collect::<Result<Vec<_>>>()?;
    stats.run = run_start.map_or(Duration::ZERO, |t| t.elapsed());
    Ok((outs, stats))
}

/// Extern step `e`: in the executor's memory when it runs it there, else through the
/// host routine on its inputs' values. Returns its name and bytes.
fn run_extern<E: Executor>(
    schedule: &Schedule,
    e: &ExternStep,
    compiled: &CompiledSchedule,
    exec: &mut E,
    slots: &mut Slots<E::Array>,
) -> Result<(String, u64)> {
    if let Some(done) = exec.run_extern_here(schedule, e, slots)? {
        return Ok(done);
    }
    exec.before_host(schedule)?;
    let host = e
        .inputs
        .iter()
        .map(|b| match &slots[b.0 as usize] {
            Some(a) => exec.download(a),
            None => Err(Error::Malformed(format!(
                "extern {} reads {b} before it was written",
                e.op.name()
            ))),
        })
        .collect::<Result<Vec<_>>>()?;
    let mut bytes: u64 = host
        .iter()
        .map(|b| (b.len() * b.dtype().size_in_bytes()) as u64)
        .sum();
    let out = extern_on_host(schedule, e, compiled.math(), host)?;
    bytes += (out.len() * out.dtype().size_in_bytes()) as u64;
    slots[e.output.0 as usize] = Some(exec.upload(out)?);
    Ok((format!("extern {}", e.op.name()), bytes))
}

/// After a failed run: hands back to `donated` the taken arrays that no step up to
/// `failed` (`None`: none ran) writes (their contents are the old version,
/// untouched); a written one is dropped, its old contents gone.
fn give_back_unwritten<A>(
    schedule: &Schedule,
    failed: Option<usize>,
    slots: &mut Slots<A>,
    donated: &mut HashMap<InputId, Arc<A>>,
) {
    for (idx, id) in unwritten_donations(schedule, failed.map_or(0, |f| f + 1)) {
        if let Some(a) = slots.get_mut(idx).and_then(Option::take) {
            donated.entry(id).or_insert(a);
        }
    }
}
