//! The realize driver: what `Tensor::realize`, every read and `realize_all` run.
//!
//! A realize passes through these stages, each in its own file:
//! 1. **settings** (`crate::settings`): the backend, math mode, fusion, passes and
//!    dump switches it runs with;
//! 2. **plan** (`plan.rs`, under the store's lock): the targets, the realize cache's
//!    lookup (`cache.rs`), the graph passes, the buffers read and donated;
//! 3. **schedule and compile** (`schedule.rs`, `schedule_cache.rs`): fusion into
//!    kernels (through the schedule cache), each loop kernel compiled by the compile
//!    stage, `lazyfuse_compile` (through its kernel cache), or the interpreter;
//! 4. **run** (`execute.rs`): the steps on host buffers or on a device's arrays;
//! 5. **install** (`plan.rs`): the results become input nodes of the store's graph.
//!
//! `dump.rs` prints the stages for `LAZYFUSE_DUMP_IR`, `stats.rs` reports them.

mod cache;
mod dump;
mod execute;
mod plan;
mod schedule;
mod schedule_cache;
mod stats;

pub(crate) use cache::fx_step;
pub(crate) use dump::KernelText;
pub(crate) use plan::passes;
pub(crate) use schedule::schedule_of;
pub use stats::{last_realize_stats, RealizeStats};

use crate::error::Result;
use crate::store::{with_store, Realized, Storage};
use crate::Device;
use execute::{execute, execute_hit, interpret, Executed, Host, Memory, OnDevice};
use lazyfuse_runtime::Buffer;
use plan::{Cached, Plan, Planned};
use std::sync::Arc;

/// Executes the storage's current node, unless it is an input already, and turns
/// it into an input node holding the result. The store is locked to plan (passes,
/// pins) and to install the results, not while kernels run: two threads realize at
/// once.
pub(crate) fn realize(storage: &Storage) -> Result<()> {
    realize_on(&[storage], storage.device)
}

/// Realizes several storages in one pass per device: one schedule computes the
/// work they share once and stores each of them.
pub(crate) fn realize_all(storages: &[&Storage]) -> Result<()> {
    let mut devices: Vec<Device> = Vec::new();
    for s in storages {
        if !devices.contains(&s.device) {
            devices.push(s.device);
        }
    }
    for device in devices {
        let group: Vec<&Storage> = storages
            .iter()
            .copied()
            .filter(|s| s.device == device)
            .collect();
        realize_on(&group, device)?;
    }
    Ok(())
}

/// Realizes `storages`, every one on `device`, in one plan: the driver.
fn realize_on(storages: &[&Storage], device: Device) -> Result<()> {
    // 1. Plan, under the store's lock: the settings, the targets, the realize
    //    cache's lookup, the passes stage, the buffers read and donated.
    let mut plan = loop {
        match with_store(|s| s.plan(storages, device)) {
            Planned::Done => return Ok(()),
            Planned::Failed(e) => return Err(e),
            Planned::Run(plan) => break plan,
            // Another thread writes an input of this realize in place; its install
            // makes that input's consumers read the new version (or gives the
            // buffer back), soon.
            Planned::Busy => std::thread::sleep(std::time::Duration::from_micros(50)),
        }
    };
    // 2.–4. Schedule → compile → run, outside the lock (`run`). A panic there (a
    // lazyfuse bug) must still release the plan's pins and its in-flight marks, or
    // other threads would wait on them forever.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&mut plan)));
    let run = match run {
        Ok(run) => run,
        Err(panic) => {
            with_store(|s| s.abandon(plan));
            std::panic::resume_unwind(panic);
        }
    };
    // 5. Install the results (recording a new structure in the realize cache), or
    //    give everything back.
    match run {
        Ok((outputs, ran)) => {
            if let (Some(ran), Cached::Miss(probe)) =
                (ran, std::mem::replace(&mut plan.cached, Cached::Off))
            {
                cache::insert(probe, ran);
            }
            with_store(|s| s.install(plan, outputs));
            Ok(())
        }
        Err(e) => {
            with_store(|s| s.abandon(plan));
            Err(e)
        }
    }
}

/// Stages 2–4 of a plan in its memory: a realize cache hit runs its recorded
/// schedule; otherwise schedule → compile → run (`execute`), or the interpreter.
fn run(plan: &mut Plan) -> Result<Executed> {
    let settings = plan.settings;
    match (&plan.cached, settings.device.ordinal(), settings.compiler) {
        (Cached::Hit(hit), None, _) => {
            execute_hit(&Host, &hit.schedule, &hit.compiled, &plan.inputs, &settings)
                .map(|outs| (outs, None))
        }
        (Cached::Hit(hit), Some(ordinal), _) => execute_hit(
            &OnDevice(ordinal),
            &hit.schedule,
            &hit.compiled,
            &plan.arrays,
            &settings,
        )
        .map(|outs| (outs, None)),
        (_, _, None) => interpret(
            &plan.graph,
            &plan.inputs,
            &plan.donated,
            &plan.targets,
            &settings,
        )
        .map(|outs| (outs.into_iter().map(Host::realized).collect(), None)),
        (_, None, Some(compiler)) => execute(
            &Host,
            compiler,
            &plan.graph,
            &plan.inputs,
            &mut plan.donated,
            &plan.targets,
            &settings,
        ),
        (_, Some(ordinal), Some(compiler)) => execute(
            &OnDevice(ordinal),
            compiler,
            &plan.graph,
            &plan.arrays,
            &mut plan.donated_arrays,
            &plan.targets,
            &settings,
        ),
    }
}

/// The realized buffer of a storage, in host memory: realizes it, then reads its
/// buffer (again, if another thread wrote a new version in between); a storage on a
/// CUDA device is copied to the host.
pub(crate) fn realized_buffer(storage: &Storage) -> Result<Arc<Buffer>> {
    loop {
        realize(storage)?;
        match with_store(|s| s.buffer_of(storage)) {
            Some(Realized::Host(b)) => return Ok(b),
            // Copied outside the store's lock: other threads build graphs meanwhile.
            Some(Realized::Device(a)) => return Ok(Arc::new(a.to_host()?)),
            None => {}
        }
    }
}
