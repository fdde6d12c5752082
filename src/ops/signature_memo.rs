//! A per-thread memo of the binary ops' dtype rules: the promoted dtype
//! (`lazyfuse_ir::promote::result_type`) and the op's signature
//! (`lazyfuse_ir::typing::binary`) by op, operand types and default dtype.
//!
//! Both rules are pure functions of that key, and a program applies a handful of
//! keys over and over (a training step or W9's chain rebuilds the same ops each
//! time): a hit is a few comparisons where the rules walk PyTorch's promotion
//! lattice and its kernel tables, hundreds of instructions per op. Only rules that
//! succeeded are kept (an error is rare and recomputed, with its text), and never
//! a float8 result, whose ops take their own path before the signature.
//!
//! The memo is direct-mapped: a key has one slot, and a key that lands on an
//! occupied slot replaces what was there.

use lazyfuse_ir::promote::OperandType;
use lazyfuse_ir::typing::Signature;
use lazyfuse_ir::{BinaryOp, DType};
use std::cell::Cell;

/// What the rules are a function of.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) op: BinaryOp,
    pub(crate) a: OperandType,
    pub(crate) b: OperandType,
    /// the default floating-point dtype
    pub(crate) default: DType,
}

/// A key and what the rules gave for it.
#[derive(Clone, Copy)]
struct Entry {
    key: Key,
    common: DType,
    signature: Signature,
}

/// Slots per thread (a power of two).
const SLOTS: usize = 16;

thread_local! {
    static MEMO: [Cell<Option<Entry>>; SLOTS] = const { [const { Cell::new(None) }; SLOTS] };
}

impl Key {
    /// The key's slot: its fields mixed by small odd multipliers.
    fn slot(&self) -> usize {
        let (a, b) = (self.a, self.b);
        let mixed = (self.op as usize)
            .wrapping_mul(31)
            .wrapping_add((a.dtype as usize).wrapping_mul(7))
            .wrapping_add((b.dtype as usize).wrapping_mul(3))
            .wrapping_add((a.priority as usize) << 1)
            .wrapping_add(b.priority as usize)
            .wrapping_add(self.default as usize);
        mixed % SLOTS
    }

    /// The promoted dtype and the signature the rules gave this key, if kept.
    pub(crate) fn get(&self) -> Option<(DType, Signature)> {
        let slot = self.slot();
        MEMO.with(|memo| match memo[slot].get() {
            Some(e) if e.key == *self => Some((e.common, e.signature)),
            _ => None,
        })
    }

    /// Keeps what the rules gave this key (not a float8 `common`).
    pub(crate) fn put(&self, common: DType, signature: Signature) {
        if common.is_float8() {
            return;
        }
        let slot = self.slot();
        MEMO.with(|memo| {
            memo[slot].set(Some(Entry {
                key: *self,
                common,
                signature,
            }))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazyfuse_ir::promote::{result_type, Priority};
    use lazyfuse_ir::typing;

    fn key(op: BinaryOp, a: DType, b: DType, wrapped: bool) -> Key {
        Key {
            op,
            a: OperandType {
                dtype: a,
                priority: Priority::Dimensioned,
            },
            b: OperandType {
                dtype: b,
                priority: if wrapped {
                    Priority::Wrapped
                } else {
                    Priority::ZeroDim
                },
            },
            default: DType::F32,
        }
    }

    /// Every kept key gives back what the rules give, whatever else was kept
    /// since (keys that share a slot replace each other, never answer for one
    /// another).
    #[test]
    fn a_hit_is_what_the_rules_give() {
        use BinaryOp::*;
        let ops = [Add, Sub, Mul, Div, Maximum, Pow, Lt, BitwiseAnd, Atan2];
        let dtypes = [
            DType::Bool,
            DType::I32,
            DType::I64,
            DType::F16,
            DType::F32,
            DType::F64,
        ];
        let mut keys = Vec::new();
        for op in ops {
            for a in dtypes {
                for b in dtypes {
                    for wrapped in [false, true] {
                        let b = if wrapped {
                            match b {
                                DType::Bool | DType::I64 | DType::F64 => b,
                                _ => continue,
                            }
                        } else {
                            b
                        };
                        keys.push(key(op, a, b, wrapped));
                    }
                }
            }
        }
        let rules = |k: &Key| -> Option<(DType, Signature)> {
            let common = result_type(&[k.a, k.b], k.default).ok()?;
            let sig = typing::binary(k.op, k.a, k.b, k.default).ok()?;
            Some((common, sig))
        };
        for k in &keys {
            if let Some((common, sig)) = rules(k) {
                k.put(common, sig);
            }
        }
        let mut hits = 0;
        for k in &keys {
            if let Some(hit) = k.get() {
                assert_eq!(Some(hit), rules(k));
                hits += 1;
            }
        }
        // the last keys put are still there
        assert!(hits >= 1);
        let last = keys.iter().rev().find(|k| rules(k).is_some()).unwrap();
        assert_eq!(last.get(), rules(last));
    }

    #[test]
    fn float8_is_never_kept() {
        let k = key(BinaryOp::Add, DType::F8E4M3FN, DType::F8E4M3FN, false);
        k.put(
            DType::F8E4M3FN,
            Signature {
                compute: DType::F32,
                output: DType::F8E4M3FN,
            },
        );
        assert_eq!(k.get(), None);
    }
}
