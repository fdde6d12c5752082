//! The realize cache: the store graph's structure as built (before the graph passes)
//! → the schedule and compiled kernels that realizing it ran, so that rebuilding and
//! realizing the same computation costs one hash of its nodes and one comparison,
//! not the passes' graph copies, the schedule cache's text key or a kernel lookup.
//!
//! The key is structural: per node in topological order its op (attributes
//! included), dtype, shape and the positions of its inputs, input buffers numbered
//! by first appearance (which buffer it is does not matter, only which nodes share
//! one), the targets' positions, and every setting the result depends on (graph
//! passes, fusion, math mode). It is written as a sequence of words without
//! building any text ([`KeyWords`]: the op's variant and the attributes of the
//! common ops, constants by their bits, layouts, the elementwise op), hashed, and
//! a hit is only taken after a full comparison with the stored key: the words,
//! equal one for one, and for the ops the words do not describe whole (reductions,
//! casts, matmuls, ...) op equality, plus equal `Debug` text where the stored
//! text shows a float zero (`0.0 == -0.0`, yet their kernels differ). So a hash
//! collision never runs a wrong schedule; colliding structures (the words leave
//! out a reduction's axes, say) keep one entry each under their hash. Constants compare by their
//! bits: a NaN constant matches only the same NaN, whose kernels are the same; a
//! NaN inside another op's attributes never compares equal (`NaN != NaN`) and
//! takes the slow path, correctly.
//!
//! In-place writes: whether a write may store into its old version's buffer (a
//! donation) depends on the store's state, not only on the structure. The key
//! holds which input buffers the store would give up (a schedule made where none
//! could be donated is not run where one can), and a schedule that donated a
//! buffer is never recorded (its hash is remembered, so that the structure skips
//! the cache without building a key again). A schedule that donated nothing is
//! valid in any state (it reads its inputs and writes fresh buffers) and is
//! recorded like any other: a training step whose updates are read by other
//! kernels of the same realize is one. IR dumps and the interpreter backend never
//! use the cache. Realizes on a CUDA device use it too, under their own flags.

use crate::settings::Settings;
use lazyfuse_ir::kernel::{MathMode, Schedule};
use lazyfuse_ir::{Graph, InputId, NodeId, Op};
use lazyfuse_runtime::exec::CompiledSchedule;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock, Mutex};

/// A structure's key as words: a [`Hasher`] that keeps every word written to
/// it (bytes in little-endian words of eight, smaller integers widened), so that
/// the `Hash` impls of the key's parts write the key itself; [`Hasher::finish`]
/// is rustc's Fx step (a multiply-rotate) in four lanes over interleaved words,
/// the lanes then folded in turn (the key is hashed on every realize, and
/// SipHash's DoS resistance buys nothing here, a collision costs a miss). The parts written (flags, derived `Hash` of fieldless enums,
/// vectors with their lengths, constants' bits) make the words a one-to-one
/// record of what they describe.
#[derive(Default)]
pub(crate) struct KeyWords(Vec<u64>);

/// The Fx hash's multiplier (rustc's `FxHasher`).
const FX: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// One step of the Fx hash: `h` with `word` mixed in (a multiply-rotate, for
/// keys that need no resistance to chosen collisions).
pub(crate) fn fx_step(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(FX)
}

impl Hasher for KeyWords {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0.push(word);
    }

    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64);
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn write_isize(&mut self, v: isize) {
        self.write_u64(v as u64);
    }

    fn finish(&self) -> u64 {
        // Four lanes over interleaved words, then the lanes in turn: each step is
        // a multiply that waits for the one before it, and one chain over a
        // realize's hundreds of words is that many multiplies back to back.
        let mut lanes = [0u64, 1, 2, 3];
        let mut quads = self.0.chunks_exact(4);
        for quad in &mut quads {
            for (lane, &word) in lanes.iter_mut().zip(quad) {
                *lane = fx_step(*lane, word);
            }
        }
        let tail = quads.remainder().iter().fold(0u64, |h, &w| fx_step(h, w));
        lanes
            .iter()
            .fold(fx_step(tail, self.0.len() as u64), |h, &l| fx_step(h, l))
    }
}

/// Each node's position in the order, by node index (the index bound of the
/// order's nodes entries; `u32::MAX` for a node not in it): read per edge on
/// every lookup, where hashing the node ids cost more than the structure's hash.
struct Positions(Vec<u32>);

impl Positions {
    /// `n`'s position as a key word: `u32::MAX` for a node not in the order.
    fn word(&self, n: &NodeId) -> u64 {
        u64::from(self.0.get(n.index()).copied().unwrap_or(u32::MAX))
    }
}

/// Most entries the cache keeps (the least recently used half goes when full).
const CAPACITY: usize = 1024;

/// The settings besides the graph that decide what a realize runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Flags {
    pub(crate) passes: bool,
    pub(crate) fuse: bool,
    pub(crate) math: MathMode,
    /// where the realize runs (a device's schedule and kernels differ)
    pub(crate) device: crate::Device,
    /// whether that device is the host emulation of `cuda:0`
    pub(crate) emulated: bool,
}

impl Flags {
    /// The part of a realize's settings that its schedule depends on.
    pub(crate) fn of(settings: &Settings) -> Flags {
        Flags {
            passes: settings.passes,
            fuse: settings.fuse,
            math: settings.math,
            device: settings.device,
            emulated: settings.emulated,
        }
    }
}

/// A node of a stored key whose op the key's words do not describe whole
/// ([`described`]): compared op for op.
struct KeyNode {
    /// its position in the topological order
    at: u32,
    op: Op,
    /// the op's `Debug` text (bitwise float identity, see the module doc)
    text: String,
    /// whether `text` may hold a float zero (`0.0` or `-0.0`, which `==` confuses)
    has_zero: bool,
}

/// A structure seen at plan time: its hash, its input buffers in numbering order,
/// and, on a miss, the full key to store once the realize has run.
pub(crate) struct Probe {
    hash: u64,
    /// the graph's input buffers by first appearance
    pub(crate) inputs: Vec<InputId>,
    /// the key's words and the nodes they do not describe whole (kept on a
    /// miss only)
    key: Option<Box<StructureKey>>,
}

/// What a hit hands back: what to run and which inputs it reads.
pub(crate) struct Hit {
    pub(crate) schedule: Arc<Schedule>,
    pub(crate) compiled: Arc<CompiledSchedule>,
    /// the schedule's input `k` is the graph's input buffer `used[k]`
    pub(crate) used: Vec<InputId>,
}

/// What the realize of a missed structure ran (recorded by [`insert`]).
pub(crate) struct Ran {
    pub(crate) schedule: Arc<Schedule>,
    pub(crate) compiled: Arc<CompiledSchedule>,
    /// the schedule's inputs (by its numbering), as graph input ids
    pub(crate) order: Vec<InputId>,
}

struct Entry {
    /// the structure's key (see [`KeyWords`]: flags, nodes, targets and the
    /// inputs in-place writes could take)
    key: StructureKey,
    schedule: Arc<Schedule>,
    compiled: Arc<CompiledSchedule>,
    /// schedule input `k` reads the graph's `used[k]`-th input buffer
    used: Vec<u32>,
    last_use: u64,
}

struct Cache {
    /// by the key's hash; structures that the words do not tell apart (ops of
    /// one variant with other attributes, such as a reduction's axes) share a
    /// hash and sit side by side in its list
    entries: HashMap<u64, Vec<Entry>>,
    /// hashes of structures whose schedule donated a buffer (not recorded): a
    /// probe of one skips the key (a collision only costs a miss)
    donating: HashSet<u64>,
    clock: u64,
}

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(|| {
    Mutex::new(Cache {
        entries: HashMap::new(),
        donating: HashSet::new(),
        clock: 0,
    })
});

fn lock() -> std::sync::MutexGuard<'static, Cache> {
    // Every edit is a whole insert or removal: a poisoned lock is consistent.
    CACHE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Compares formatted text with `expect` as it is produced (no string is built).
struct CmpWriter<'a> {
    expect: &'a str,
    at: usize,
}

impl std::fmt::Write for CmpWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        match self.expect.get(self.at..self.at + s.len()) {
            Some(part) if part == s => {
                self.at += s.len();
                Ok(())
            }
            _ => Err(std::fmt::Error),
        }
    }
}

/// Writes an op without formatting it: its variant and, for the ops
/// [`described`] names, every attribute (constants by their bits, layouts, the
/// elementwise op). Other ops of one variant write alike and are told apart by
/// [`matches`].
fn hash_op(op: &Op, h: &mut KeyWords) {
    std::mem::discriminant(op).hash(h);
    match op {
        Op::Full(s) => h.0.extend(s.identity()),
        Op::View(l) | Op::WriteView(l) => l.hash(h),
        Op::Unary(u) => u.hash(h),
        Op::Binary(b) => b.hash(h),
        _ => {}
    }
}

/// Whether [`hash_op`] writes every attribute of `op` (an input's number is
/// written beside it), so that equal words mean equal ops.
fn described(op: &Op) -> bool {
    matches!(
        op,
        Op::Input(_) | Op::Full(_) | Op::View(_) | Op::WriteView(_) | Op::Unary(_) | Op::Binary(_)
    )
}

/// Whether `op`'s `Debug` text is exactly `text`.
fn same_text(op: &Op, text: &str) -> bool {
    let mut w = CmpWriter {
        expect: text,
        at: 0,
    };
    write!(w, "{op:?}").is_ok() && w.at == text.len()
}

/// The input number of `id` (first appearance), numbering it if new.
fn number(inputs: &mut Vec<InputId>, id: InputId) -> usize {
    inputs.iter().position(|&i| i == id).unwrap_or_else(|| {
        inputs.push(id);
        inputs.len() - 1
    })
}

/// Positions of `order`'s nodes.
fn positions(order: &[NodeId]) -> Positions {
    let bound = order.iter().map(|n| n.index() + 1).max().unwrap_or(0);
    let mut pos = vec![u32::MAX; bound];
    for (i, n) in order.iter().enumerate() {
        pos[n.index()] = i as u32;
    }
    Positions(pos)
}

/// Drops the least recently used half of a cache whose entries sit in lists by
/// hash (as `Cache::entries`) once it holds `capacity` of them; `last_use`
/// reads an entry's clock.
pub(crate) fn evict_half<E>(
    entries: &mut HashMap<u64, Vec<E>>,
    capacity: usize,
    last_use: impl Fn(&E) -> u64,
) {
    let held: usize = entries.values().map(Vec::len).sum();
    if held < capacity {
        return;
    }
    let mut uses: Vec<u64> = entries.values().flatten().map(&last_use).collect();
    uses.sort_unstable();
    let cutoff = uses[uses.len() / 2];
    entries.retain(|_, list| {
        list.retain(|e| last_use(e) > cutoff);
        !list.is_empty()
    });
}

/// The key words of the structure of `graph`'s nodes `order` (a topological
/// order, as [`Graph::topo_order`] gives for `targets`) after `head`'s: per node
/// its op ([`hash_op`]; an input by its number), dtype, shape and the positions
/// of its inputs, then the targets' positions; and the graph's input buffers by
/// first appearance (the numbers the words give them).
pub(crate) fn structure_words(
    graph: &Graph,
    order: &[NodeId],
    targets: &[NodeId],
    head: &impl Hash,
) -> (KeyWords, Vec<InputId>) {
    let pos = positions(order);
    let mut h = KeyWords(Vec::with_capacity(8 * order.len() + 8));
    head.hash(&mut h);
    let mut inputs = Vec::new();
    // (words pushed one by one rather than through `Hash`: a shape's derived
    // hash writes its dims as bytes, which `KeyWords::write` cuts back into
    // words, and an `Option` costs a word for its variant)
    for &n in order {
        let node = graph.node(n);
        match node.op {
            Op::Input(id) => {
                u8::MAX.hash(&mut h);
                h.0.push(number(&mut inputs, id) as u64);
            }
            ref op => hash_op(op, &mut h),
        }
        node.dtype.hash(&mut h);
        let producers = graph.inputs(n);
        // the shape's and the producers' lengths in one word (each far below
        // 2^32), so that the words stay a one-to-one record
        h.0.push(node.shape.len() as u64 | (producers.len() as u64) << 32);
        h.0.extend(node.shape.iter().map(|&d| d as u64));
        h.0.extend(producers.iter().map(|i| pos.word(i)));
    }
    for t in targets {
        h.0.push(pos.word(t));
    }
    (h, inputs)
}

/// The nodes of `order` whose ops the key's words do not describe whole
/// ([`described`]), for [`same_structure`] to compare op for op.
fn key_nodes(graph: &Graph, order: &[NodeId]) -> Vec<KeyNode> {
    order
        .iter()
        .enumerate()
        .filter(|&(_, &n)| !described(&graph.node(n).op))
        .map(|(at, &n)| {
            let op = graph.node(n).op.clone();
            let text = format!("{op:?}");
            KeyNode {
                at: at as u32,
                has_zero: text.contains("0.0"),
                text,
                op,
            }
        })
        .collect()
}

/// A structure's full key, to store: its words and its [`key_nodes`].
pub(crate) struct StructureKey {
    words: Box<[u64]>,
    nodes: Vec<KeyNode>,
}

impl StructureKey {
    /// The key of the structure whose words are `words` (from
    /// [`structure_words`] over `graph`'s `order`).
    pub(crate) fn new(words: KeyWords, graph: &Graph, order: &[NodeId]) -> StructureKey {
        StructureKey {
            words: words.0.into_boxed_slice(),
            nodes: key_nodes(graph, order),
        }
    }

    /// Whether `other` is the same key (equal words, and the same ops by their
    /// text where the words leave them out).
    fn same_as(&self, other: &StructureKey) -> bool {
        self.words == other.words
            && self.nodes.len() == other.nodes.len()
            && self
                .nodes
                .iter()
                .zip(&other.nodes)
                .all(|(a, b)| a.at == b.at && a.text == b.text)
    }

    /// Whether this is exactly the structure of `graph`'s `order`, whose words
    /// are `words` (see the module doc).
    pub(crate) fn matches(&self, graph: &Graph, order: &[NodeId], words: &KeyWords) -> bool {
        *self.words == *words.0
            && self.nodes.iter().all(|k| {
                let op = &graph.node(order[k.at as usize]).op;
                // `==` is exact except for `0.0 == -0.0` (NaN never matches):
                // only an op whose stored text shows a float zero needs the
                // text compared.
                k.op == *op && (!k.has_zero || same_text(op, &k.text))
            })
    }
}

/// Hashes the structure of `graph`'s nodes `order` (a topological order, as
/// [`Graph::topo_order`] gives for `targets`) and looks it up: `Ok(hit)` when the
/// cache holds this exact structure, else `Err(probe)` to run the slow path with
/// and [`insert`] afterwards.
pub(crate) fn lookup(
    graph: &Graph,
    order: &[NodeId],
    targets: &[NodeId],
    flags: Flags,
    donatable: &[InputId],
) -> std::result::Result<Hit, Probe> {
    let (mut h, inputs) = structure_words(graph, order, targets, &flags);
    // which input buffers in-place writes may take (by numbering): a schedule
    // made without a donation is not the one to run where one is possible
    let eligible: Box<[u32]> = (0..inputs.len() as u32)
        .filter(|&k| donatable.contains(&inputs[k as usize]))
        .collect();
    eligible.hash(&mut h);
    let hash = h.finish();
    {
        let mut cache = lock();
        cache.clock += 1;
        let now = cache.clock;
        let found = cache.entries.get_mut(&hash).and_then(|list| {
            let e = list.iter_mut().find(|e| e.key.matches(graph, order, &h))?;
            e.last_use = now;
            Some(Hit {
                schedule: e.schedule.clone(),
                compiled: e.compiled.clone(),
                used: e.used.iter().map(|&k| inputs[k as usize]).collect(),
            })
        });
        if let Some(hit) = found {
            return Ok(hit);
        }
        if cache.donating.contains(&hash) {
            return Err(Probe {
                hash,
                inputs,
                key: None,
            });
        }
    }
    // A miss: the full key, to store once the realize has run.
    Err(Probe {
        hash,
        inputs,
        key: Some(Box::new(StructureKey::new(h, graph, order))),
    })
}

/// Records what the realize of a missed structure ran. A schedule that reads an
/// input the structure does not hold (a bug elsewhere) is not recorded, nor one
/// that donated a buffer (see the module doc).
pub(crate) fn insert(mut probe: Probe, ran: Ran) {
    if !ran.schedule.donated().is_empty() {
        let mut cache = lock();
        if cache.donating.len() >= CAPACITY {
            cache.donating.clear();
        }
        cache.donating.insert(probe.hash);
        return;
    }
    let Some(key) = probe.key.take() else {
        return;
    };
    let used: Option<Vec<u32>> = ran
        .order
        .iter()
        .map(|id| probe.inputs.iter().position(|i| i == id).map(|k| k as u32))
        .collect();
    let Some(used) = used else {
        return;
    };
    let mut cache = lock();
    cache.clock += 1;
    let now = cache.clock;
    evict_half(&mut cache.entries, CAPACITY, |e| e.last_use);
    // A structure recorded meanwhile (by another thread) is replaced, a
    // colliding one kept beside it.
    let entry = Entry {
        key: *key,
        schedule: ran.schedule,
        compiled: ran.compiled,
        used,
        last_use: now,
    };
    let list = cache.entries.entry(probe.hash).or_default();
    match list.iter_mut().find(|e| e.key.same_as(&entry.key)) {
        Some(old) => *old = entry,
        None => list.push(entry),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazyfuse_ir::kernel::Schedule;
    use lazyfuse_ir::{DType, Scalar};

    /// A graph `full(value) + input`, its order and its targets.
    fn graph(value: Scalar, dtype: DType) -> (Graph, Vec<NodeId>, Vec<NodeId>) {
        let mut g = Graph::new();
        let x = g.add(Op::Input(InputId(9)), dtype, vec![3], &[]);
        let c = g.add(Op::Full(value), dtype, vec![3], &[]);
        let y = g.add(
            Op::Binary(lazyfuse_ir::BinaryOp::Add),
            dtype,
            vec![3],
            &[x, c],
        );
        let order = g.topo_order(&[y]);
        (g, order, vec![y])
    }

    /// The entry a miss on `(g, order, targets)` would store.
    fn entry_of(g: &Graph, order: &[NodeId], targets: &[NodeId], flags: Flags) -> Entry {
        let probe = match lookup(g, order, targets, flags, &[]) {
            Err(p) => p,
            Ok(_) => panic!("a fresh structure hit"),
        };
        let key = *probe.key.unwrap();
        let schedule = Schedule {
            buffers: vec![],
            steps: vec![],
            outputs: vec![],
            notes: vec![],
        };
        let (compiled, _) = lazyfuse_compile::compile(&schedule, flags.math).unwrap();
        Entry {
            key,
            schedule: Arc::new(schedule),
            compiled: Arc::new(compiled),
            used: vec![0],
            last_use: 0,
        }
    }

    /// The key words of `(g, order, targets)` (a fresh lookup's).
    fn words_of(g: &Graph, order: &[NodeId], targets: &[NodeId], flags: Flags) -> KeyWords {
        KeyWords(entry_of(g, order, targets, flags).key.words.into_vec())
    }

    /// The comparison behind a hit, as if two structures had collided on the hash.
    fn same(a: (Scalar, DType), b: (Scalar, DType), fa: Flags, fb: Flags) -> bool {
        let (g, order, targets) = graph(a.0, a.1);
        let e = entry_of(&g, &order, &targets, fa);
        let (g, order, targets) = graph(b.0, b.1);
        let words = words_of(&g, &order, &targets, fb);
        e.key.matches(&g, &order, &words)
    }

    #[test]
    fn eviction_drops_the_least_recently_used_half_across_lists() {
        // clocks 1..=8, two to a hash
        let mut m: HashMap<u64, Vec<u64>> = HashMap::new();
        for clock in 1..=8u64 {
            m.entry(clock % 4).or_default().push(clock);
        }
        evict_half(&mut m, 9, |&c| c);
        assert_eq!(m.values().map(Vec::len).sum::<usize>(), 8, "below capacity");
        evict_half(&mut m, 8, |&c| c);
        let mut kept: Vec<u64> = m.values().flatten().copied().collect();
        kept.sort_unstable();
        assert_eq!(kept, [6, 7, 8]);
        assert!(m.values().all(|l| !l.is_empty()), "empty lists go");
    }

    #[test]
    fn only_equal_structures_match_even_on_a_collision() {
        // Distinct flags so that no other test's entry answers the probes.
        let f = Flags {
            passes: false,
            fuse: false,
            math: MathMode::Exact,
            device: crate::Device::CPU,
            emulated: false,
        };
        let fast = Flags {
            math: MathMode::Fast,
            ..f
        };
        let s = |v: f64| (Scalar::Float(v), DType::F32);
        assert!(same(s(2.5), s(2.5), f, f));
        assert!(same(s(0.0), s(0.0), f, f));
        assert!(!same(s(0.0), s(-0.0), f, f), "0.0 == -0.0 must not match");
        assert!(!same(s(-0.0), s(0.0), f, f));
        assert!(!same(s(1.0), s(-0.0), f, f));
        // A constant compares by its bits: the same NaN matches (its kernels
        // are the same), another NaN does not.
        assert!(same(s(f64::NAN), s(f64::NAN), f, f));
        assert!(!same(s(f64::NAN), s(-f64::NAN), f, f));
        assert!(!same(s(2.5), (Scalar::Float(2.5), DType::F64), f, f));
        assert!(!same(s(2.5), (Scalar::Int(2), DType::F32), f, f));
        assert!(!same(s(2.5), s(2.5), f, fast));
        let gpu = Flags {
            device: crate::Device::cuda(0),
            ..f
        };
        assert!(!same(s(2.5), s(2.5), f, gpu), "a device's entry is its own");
    }
}
