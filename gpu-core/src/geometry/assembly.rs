//! Primitive assembly: shaded vertices in, triangles out (`pica-core.md` §7, `pica-raster.md` §1).
//!
//! * Input: [`OutputVertex`] values (or any `Copy` vertex type) from the vertex shader, or from the
//!   geometry shader's EMIT together with its winding flag.
//! * Output: triangles `[V; 3]` in the order the hardware hands them to the clipper.
//! * Registers read: PRIMITIVE_CONFIG (0x25E) bits 8-9 (topology, decoded by
//!   [`Topology::from_bits`]); a write to 0x25E or to RESTART_PRIMITIVE (0x25F) resets the state
//!   ([`PrimitiveAssembler::set_topology`], [`PrimitiveAssembler::reset`]).
//!
//! The assembler keeps a two-vertex buffer, a slot index, a "strip ready" flag and the winding
//! flag. This state belongs to the GPU, not to a draw: it persists across draw calls, so a strip
//! that is not restarted between two draws continues into the second one (the \[C\] behaviour that
//! its hardware-accelerated path calls out as a known difference).
//!
//! Topologies (vertices `v0, v1, …` in submission order):
//! * list: `(v0,v1,v2), (v3,v4,v5), …`;
//! * strip: `(v0,v1,v2), (v2,v1,v3), (v2,v3,v4), (v4,v3,v5), …` — each new vertex replaces the
//!   buffer slots alternately, which keeps every triangle's winding consistent;
//! * fan: `(v0,v1,v2), (v0,v2,v3), …`;
//! * geometry: like a list, but if the winding flag was raised (by a GS `SETEMIT` with the winding
//!   bit) the next triangle is emitted as `(v1,v0,v2)` and the flag is cleared.
//!
//! \[C\]: citra-emu/citra `src/video_core/primitive_assembly.cpp` (behaviour only).

pub use crate::debug::Topology;
use crate::vertex::OutputVertex;

/// Assembles a vertex stream into triangles according to a [`Topology`].
///
/// `V` is usually [`OutputVertex`]; tests and the viewer may use indices instead.
#[derive(Clone, Debug)]
pub struct PrimitiveAssembler<V: Copy = OutputVertex> {
    topology: Topology,
    /// The two buffered vertices; only the first `index` entries (lists) or both once
    /// `strip_ready` is set (strips, fans) are meaningful.
    buffer: [Option<V>; 2],
    /// Which buffer slot the next vertex goes to (0 or 1).
    index: usize,
    /// Strips and fans: both buffer slots hold vertices, so each new vertex makes a triangle.
    strip_ready: bool,
    /// Geometry topology: swap the first two vertices of the next triangle.
    winding: bool,
}

impl<V: Copy> PrimitiveAssembler<V> {
    /// An empty assembler for `topology`.
    pub fn new(topology: Topology) -> Self {
        Self {
            topology,
            buffer: [None, None],
            index: 0,
            strip_ready: false,
            winding: false,
        }
    }

    /// The topology in use.
    pub fn topology(&self) -> Topology {
        self.topology
    }

    /// Reconfigures for `topology` and resets (any write to PRIMITIVE_CONFIG, 0x25E).
    ///
    /// HW: \[C\] resets on every write to 0x25E, even when the topology does not change.
    pub fn set_topology(&mut self, topology: Topology) {
        self.topology = topology;
        self.reset();
    }

    /// Drops the buffered vertices and the winding flag (RESTART_PRIMITIVE, 0x25F).
    ///
    /// UNVERIFIED: \[C\] resets on any write to 0x25F; \[P\] only when bit 0 is 1. The caller decides
    /// which writes count (see the command processor); this function always resets.
    pub fn reset(&mut self) {
        self.buffer = [None, None];
        self.index = 0;
        self.strip_ready = false;
        self.winding = false;
    }

    /// True if no vertex is buffered (a new draw will not continue an earlier primitive).
    pub fn is_empty(&self) -> bool {
        self.index == 0 && !self.strip_ready
    }

    /// Raises the winding flag: the next triangle of a geometry-topology draw is emitted with
    /// its first two vertices swapped (GS `SETEMIT` with the winding bit, then `EMIT`).
    ///
    /// The flag is only consumed by [`Topology::Geometry`]; with the other topologies it stays
    /// raised until a reset (as in \[C\]).
    pub fn set_winding(&mut self) {
        self.winding = true;
    }

    /// True if the winding flag is raised.
    pub fn winding(&self) -> bool {
        self.winding
    }

    /// Submits one vertex; returns the triangle it completes, if any.
    pub fn push(&mut self, v: V) -> Option<[V; 3]> {
        match self.topology {
            Topology::List | Topology::Geometry => {
                if self.index < 2 {
                    self.buffer[self.index] = Some(v);
                    self.index += 1;
                    return None;
                }
                self.index = 0;
                let (a, b) = self.pair()?;
                if self.topology == Topology::Geometry && self.winding {
                    self.winding = false;
                    Some([b, a, v])
                } else {
                    Some([a, b, v])
                }
            }
            Topology::Strip | Topology::Fan => {
                let tri = if self.strip_ready {
                    self.pair().map(|(a, b)| [a, b, v])
                } else {
                    None
                };
                // HW: [C] keeps the alternating slot replacement for strips; a fan always
                // replaces slot 1 once slot 0 holds the centre vertex.
                self.buffer[self.index] = Some(v);
                self.strip_ready |= self.index == 1;
                self.index = match self.topology {
                    Topology::Strip => self.index ^ 1,
                    _ => 1,
                };
                tri
            }
        }
    }

    fn pair(&self) -> Option<(V, V)> {
        // ok: both slots are always filled when this is called (index reached 2, or strip_ready);
        // the Option only guards against a logic error and then drops the triangle.
        Some((self.buffer[0]?, self.buffer[1]?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(topology: Topology, n: u32) -> Vec<[u32; 3]> {
        let mut pa = PrimitiveAssembler::new(topology);
        (0..n).filter_map(|v| pa.push(v)).collect()
    }

    #[test]
    fn triangle_list() {
        assert_eq!(run(Topology::List, 8), vec![[0, 1, 2], [3, 4, 5]]);
    }

    #[test]
    fn triangle_strip_alternates_slots() {
        assert_eq!(
            run(Topology::Strip, 6),
            vec![[0, 1, 2], [2, 1, 3], [2, 3, 4], [4, 3, 5]],
        );
    }

    #[test]
    fn strip_winding_is_consistent() {
        // Vertices of a zig-zag strip in the plane: even ones on y = 0, odd ones on y = 1.
        let pos = |v: u32| (v as f32 * 0.5, (v % 2) as f32);
        for [a, b, c] in run(Topology::Strip, 9) {
            let (pa, pb, pc) = (pos(a), pos(b), pos(c));
            let area = (pb.0 - pa.0) * (pc.1 - pa.1) - (pb.1 - pa.1) * (pc.0 - pa.0);
            assert!(
                area < 0.0,
                "triangle ({a},{b},{c}) flips winding: area {area}"
            );
        }
    }

    #[test]
    fn triangle_fan() {
        assert_eq!(run(Topology::Fan, 5), vec![[0, 1, 2], [0, 2, 3], [0, 3, 4]]);
    }

    #[test]
    fn geometry_topology_without_winding_is_a_list() {
        assert_eq!(run(Topology::Geometry, 6), vec![[0, 1, 2], [3, 4, 5]]);
    }

    #[test]
    fn geometry_winding_swaps_once() {
        let mut pa = PrimitiveAssembler::new(Topology::Geometry);
        pa.push(0);
        pa.push(1);
        pa.set_winding();
        assert_eq!(pa.push(2), Some([1, 0, 2]));
        assert!(!pa.winding());
        pa.push(3);
        pa.push(4);
        assert_eq!(pa.push(5), Some([3, 4, 5]));
    }

    #[test]
    fn winding_is_ignored_by_lists_and_stays_raised() {
        let mut pa = PrimitiveAssembler::new(Topology::List);
        pa.set_winding();
        pa.push(0);
        pa.push(1);
        assert_eq!(pa.push(2), Some([0, 1, 2]));
        assert!(pa.winding());
    }

    #[test]
    fn state_persists_across_draws_until_restart() {
        let mut pa = PrimitiveAssembler::new(Topology::Strip);
        // Draw 1: three vertices; draw 2 continues the strip.
        let mut out: Vec<[u32; 3]> = (0..3).filter_map(|v| pa.push(v)).collect();
        out.extend((3..5).filter_map(|v| pa.push(v)));
        assert_eq!(out, vec![[0, 1, 2], [2, 1, 3], [2, 3, 4]]);
        // Restart: the next two vertices only fill the buffer.
        pa.reset();
        assert!(pa.is_empty());
        assert_eq!(pa.push(10), None);
        assert_eq!(pa.push(11), None);
        assert_eq!(pa.push(12), Some([10, 11, 12]));
    }

    #[test]
    fn list_remainder_carries_into_next_draw() {
        let mut pa = PrimitiveAssembler::new(Topology::List);
        assert_eq!(pa.push(0), None);
        assert_eq!(pa.push(1), None);
        // Next draw.
        assert_eq!(pa.push(7), Some([0, 1, 7]));
    }

    #[test]
    fn set_topology_resets_even_when_unchanged() {
        let mut pa = PrimitiveAssembler::new(Topology::Fan);
        pa.push(0);
        pa.push(1);
        pa.set_winding();
        pa.set_topology(Topology::Fan);
        assert!(pa.is_empty());
        assert!(!pa.winding());
        assert_eq!(pa.push(5), None);
        assert_eq!(pa.push(6), None);
        assert_eq!(pa.push(7), Some([5, 6, 7]));
        pa.set_topology(Topology::List);
        assert_eq!(pa.topology(), Topology::List);
        assert!(run(Topology::List, 2).is_empty());
    }

    #[test]
    fn topology_field_decodes_all_values() {
        let table = [
            (0x000, Topology::List),
            (0x100, Topology::Strip),
            (0x200, Topology::Fan),
            (0x300, Topology::Geometry),
        ];
        for (reg, want) in table {
            assert_eq!(Topology::from_bits(reg >> 8), want);
        }
    }
}
