//! The inspection methods: the graph, schedule, Cranelift, assembly and CUDA text
//! of what realizing a tensor would run, and its kernel count.

use super::Tensor;
use crate::error::Result;
use crate::settings::Settings;
use crate::store::with_store;
use lazyfuse_ir::kernel::{Schedule, Step};

impl Tensor {
    /// The text form of the graph this tensor's storage depends on (what
    /// `LAZYFUSE_DUMP_IR` prints), for inspection and golden tests.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[2], DType::F32).exp().unwrap();
    /// assert_eq!(t.graph_text(), "%0 = full(value=0) : float32[2]\n%1 = exp(%0) : float32[2]  -> t0\n");
    /// ```
    pub fn graph_text(&self) -> String {
        with_store(|s| s.graph.dump(&[self.0.storage.node()]))
    }

    /// The text form of the same graph after the graph passes
    /// (`lazyfuse_ir::passes::optimize`), as `LAZYFUSE_DUMP_IR` prints it "after
    /// passes" when this tensor alone is realized. The passes run even when
    /// [`crate::set_passes`] turned them off for realize.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::zeros(&[2], DType::F32);
    /// let t = x.exp().unwrap().add(&x.exp().unwrap()).unwrap();
    /// assert_eq!(
    ///     t.optimized_graph_text(),
    ///     "%0 = full(value=0) : float32[2]\n%1 = exp(%0) : float32[2]\n%2 = add(%1, %1) : float32[2]  -> t0\n"
    /// );
    /// ```
    pub fn optimized_graph_text(&self) -> String {
        with_store(|s| {
            let opt = lazyfuse_ir::passes::optimize(&s.graph, &[self.0.storage.node()]);
            opt.graph.dump(&opt.targets)
        })
    }

    /// The schedule of this tensor's graph alone (after the passes stage, as a
    /// realize runs it with the current settings): the kernels with the graph nodes
    /// each holds and their loop IR, as `LAZYFUSE_DUMP_IR` prints it. `Err` when the
    /// scheduler refuses the graph.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let x = Tensor::ones(&[4], DType::F32);
    /// let y = x.mul(2.0).unwrap().exp().unwrap();
    /// assert!(y.schedule_text().unwrap().contains("step 0: loop"));
    /// ```
    pub fn schedule_text(&self) -> Result<String> {
        Ok(self.inspected_schedule()?.0.text())
    }

    /// What realizing this tensor alone would schedule, through the realize's own
    /// stages (`realize::passes`, `realize::schedule_of`) with the current settings
    /// (dumps off), and those settings.
    fn inspected_schedule(&self) -> Result<(Schedule, Settings)> {
        let settings = Settings {
            dump: false,
            ..Settings::current(self.device())?
        };
        with_store(|s| {
            let (graph, targets) =
                crate::realize::passes(&s.graph, &[self.0.storage.node()], &[], &settings);
            let schedule = crate::realize::schedule_of(&graph, &targets, &[], &settings)?;
            Ok((schedule, settings))
        })
    }

    /// The Cranelift IR of every loop kernel of [`Tensor::schedule_text`]'s schedule.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let y = Tensor::ones(&[4], DType::F32).neg().unwrap();
    /// assert!(y.clif_text().unwrap().contains("function"));
    /// ```
    pub fn clif_text(&self) -> Result<String> {
        self.loop_kernel_texts(lazyfuse_compile::clif_text)
    }

    /// The machine code that Cranelift makes of every loop kernel of
    /// [`Tensor::schedule_text`]'s schedule (after register allocation, as
    /// `LAZYFUSE_DUMP_IR=asm` prints it): to see what the CPU runs per element.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let y = Tensor::ones(&[4], DType::F32).neg().unwrap();
    /// assert!(y.asm_text().unwrap().contains("ret"));
    /// ```
    pub fn asm_text(&self) -> Result<String> {
        self.loop_kernel_texts(lazyfuse_compile::asm_text)
    }

    /// `text` of each loop kernel of this tensor's schedule with the current math
    /// mode, each after a line naming the kernel.
    pub(super) fn loop_kernel_texts(&self, text: crate::realize::KernelText) -> Result<String> {
        let (sched, settings) = self.inspected_schedule()?;
        let mut out = String::new();
        for step in &sched.steps {
            if let Step::Loop(k) = step {
                out.push_str(&format!("; {}\n", k.name));
                out.push_str(&text(k, settings.math)?);
            }
        }
        Ok(out)
    }

    /// The CUDA C (`lazyfuse_codegen::cuda`) of every loop kernel of
    /// [`Tensor::schedule_text`]'s schedule: what the GPU backend compiles with NVRTC,
    /// without the shared prelude of device functions.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let y = Tensor::ones(&[4], DType::F32).exp().unwrap();
    /// assert!(y.cuda_text().unwrap().contains("__global__"));
    /// ```
    pub fn cuda_text(&self) -> Result<String> {
        let (sched, settings) = self.inspected_schedule()?;
        let mut out = String::new();
        for step in &sched.steps {
            if let Step::Loop(k) = step {
                let src = lazyfuse_codegen::cuda::kernel_source(k, settings.math).map_err(|e| {
                    lazyfuse_runtime::Error::Unsupported(format!(
                        "compiling kernel {} to CUDA C: {e}",
                        k.name
                    ))
                })?;
                out.push_str(&src.function);
            }
        }
        Ok(out)
    }

    /// Number of kernels (loop kernels and extern steps) that realizing this tensor
    /// alone takes on the JIT.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let a = Tensor::ones(&[8], DType::F32);
    /// let w1 = a.mul(&a).unwrap().add(&a).unwrap().relu().unwrap().mul(0.5).unwrap().add(&a).unwrap().tanh().unwrap();
    /// assert_eq!(w1.kernel_count().unwrap(), 1);
    /// ```
    pub fn kernel_count(&self) -> Result<usize> {
        Ok(self.inspected_schedule()?.0.kernel_count())
    }
}
