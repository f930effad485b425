// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Tests of the vertex loader: formats, loader layouts, fixed/default slots, index modes and
//! malformed state.

use super::*;
use crate::memory::{FCRAM, VRAM};
use pica_cmd::regs::id;

const REG_ATTRIBBUFFERS_LOC: usize = id::ATTRIBBUFFERS_LOC as usize;
const REG_ATTRIBBUFFERS_FORMAT_LOW: usize = id::ATTRIBBUFFERS_FORMAT_LOW as usize;
const REG_ATTRIBBUFFERS_FORMAT_HIGH: usize = id::ATTRIBBUFFERS_FORMAT_HIGH as usize;
const REG_ATTRIBBUFFER0_OFFSET: usize = id::attribbuffer(0) as usize;
const REG_INDEXBUFFER_CONFIG: usize = id::INDEXBUFFER_CONFIG as usize;
const REG_NUMVERTICES: usize = id::NUMVERTICES as usize;
const REG_VERTEX_OFFSET: usize = id::VERTEX_OFFSET as usize;

/// Attribute base used by the tests (a multiple of 16 in FCRAM).
const BASE: u32 = FCRAM.base + 0x1000;

type Regs = Box<[u32; 0x300]>;

fn regs() -> Regs {
    let mut r = Box::new([0u32; 0x300]);
    r[REG_ATTRIBBUFFERS_LOC] = BASE >> 3;
    r
}

/// Sets attribute `a`'s format nibble (type 0-3, components 1-4).
fn set_format(r: &mut Regs, a: usize, ty: u32, comps: u32) {
    let nib = ty | ((comps - 1) << 2);
    let (reg, sh) = if a < 8 {
        (REG_ATTRIBBUFFERS_FORMAT_LOW, 4 * a)
    } else {
        (REG_ATTRIBBUFFERS_FORMAT_HIGH, 4 * (a - 8))
    };
    r[reg] = (r[reg] & !(0xF << sh)) | (nib << sh);
}

/// Sets the attribute count (1-16) and the fixed mask.
fn set_count(r: &mut Regs, count: u32, fixed_mask: u32) {
    let h = &mut r[REG_ATTRIBBUFFERS_FORMAT_HIGH];
    *h = (*h & 0xFFFF) | ((fixed_mask & 0xFFF) << 16) | ((count - 1) << 28);
}

/// Configures loader `n`.
fn set_loader(r: &mut Regs, n: usize, offset: u32, entries: &[u32], stride: u32) {
    let base = REG_ATTRIBBUFFER0_OFFSET + 3 * n;
    let mut c1 = 0;
    let mut c2 = 0;
    for (i, &e) in entries.iter().enumerate() {
        if i < 8 {
            c1 |= e << (4 * i);
        } else {
            c2 |= e << (4 * (i - 8));
        }
    }
    r[base] = offset;
    r[base + 1] = c1;
    r[base + 2] = c2 | (stride << 16) | ((entries.len() as u32) << 28);
}

fn fixed_values() -> [[f32; 4]; MAX_ATTRIBUTES] {
    std::array::from_fn(|i| [i as f32, 10.0 + i as f32, 20.0, 30.0])
}

fn load(cfg: &LoaderConfig, mem: &PhysMem, vertex: u32) -> Result<AttributeSet, LoadDiag> {
    let mut out = AttributeSet::default();
    cfg.load_vertex(mem, &fixed_values(), 0, vertex, &mut out)?;
    Ok(out)
}

#[test]
fn every_component_format_and_count() {
    // (type, components, bytes, expected vec4)
    let cases: &[(u32, u32, &[u8], [f32; 4])] = &[
        (0, 1, &[0x80], [-128.0, 0.0, 0.0, 1.0]),
        (0, 2, &[0x7F, 0xFF], [127.0, -1.0, 0.0, 1.0]),
        (0, 3, &[1, 2, 0xFE], [1.0, 2.0, -2.0, 1.0]),
        (0, 4, &[0, 0x81, 5, 0x80], [0.0, -127.0, 5.0, -128.0]),
        (1, 1, &[0xFF], [255.0, 0.0, 0.0, 1.0]),
        (1, 2, &[0x80, 0], [128.0, 0.0, 0.0, 1.0]),
        (1, 3, &[1, 2, 3], [1.0, 2.0, 3.0, 1.0]),
        (1, 4, &[10, 20, 30, 0], [10.0, 20.0, 30.0, 0.0]),
        (2, 1, &[0x00, 0x80], [-32768.0, 0.0, 0.0, 1.0]),
        (2, 2, &[0xFF, 0x7F, 0xFF, 0xFF], [32767.0, -1.0, 0.0, 1.0]),
        (
            2,
            3,
            &[0x34, 0x12, 2, 0, 0xFE, 0xFF],
            [4660.0, 2.0, -2.0, 1.0],
        ),
        (2, 4, &[1, 0, 2, 0, 3, 0, 0, 0], [1.0, 2.0, 3.0, 0.0]),
        (3, 1, &(-1.5f32).to_le_bytes(), [-1.5, 0.0, 0.0, 1.0]),
        (
            3,
            2,
            &[0.25f32.to_le_bytes(), 1e10f32.to_le_bytes()].concat(),
            [0.25, 1e10, 0.0, 1.0],
        ),
        (
            3,
            3,
            &[
                1.0f32.to_le_bytes(),
                2.0f32.to_le_bytes(),
                3.0f32.to_le_bytes(),
            ]
            .concat(),
            [1.0, 2.0, 3.0, 1.0],
        ),
        (
            3,
            4,
            &[0.5f32, -0.5, 100.0, 0.0]
                .iter()
                .flat_map(|f| f.to_le_bytes())
                .collect::<Vec<_>>(),
            [0.5, -0.5, 100.0, 0.0],
        ),
    ];
    for &(ty, comps, bytes, want) in cases {
        let mut r = regs();
        set_format(&mut r, 0, ty, comps);
        set_count(&mut r, 1, 0);
        set_loader(&mut r, 0, 0, &[0], bytes.len() as u32);
        let cfg = LoaderConfig::from_regs(&r);
        assert!(cfg.diagnostics.is_empty(), "{:?}", cfg.diagnostics);
        let mut mem = PhysMem::new();
        // Vertex 1 holds the data; vertex 0 is garbage.
        mem.write(BASE, &vec![0xAA; bytes.len()]).unwrap();
        mem.write(BASE + bytes.len() as u32, bytes).unwrap();
        let set = load(&cfg, &mem, 1).unwrap();
        assert_eq!(set.values[0], want, "type {ty} x{comps}");
        assert_eq!(
            set.sources[0],
            AttribSource::Buffer {
                loader: 0,
                addr: BASE + bytes.len() as u32
            }
        );
        assert_eq!(set.count, 1);
    }
}

#[test]
fn interleaved_layout_aligns_each_element() {
    // Loader 0: attr 1 (u8 x3, 3 bytes) | attr 0 (f32 x3, aligned to 4) | attr 2 (s16 x1).
    let mut r = regs();
    set_format(&mut r, 0, 3, 3);
    set_format(&mut r, 1, 1, 3);
    set_format(&mut r, 2, 2, 1);
    set_count(&mut r, 3, 0);
    set_loader(&mut r, 0, 0x40, &[1, 0, 2], 20);
    let cfg = LoaderConfig::from_regs(&r);
    assert!(cfg.diagnostics.is_empty(), "{:?}", cfg.diagnostics);
    let offs: Vec<u32> = cfg.slots[..3]
        .iter()
        .map(|s| match s {
            SlotSource::Buffer {
                offset,
                stride: 20,
                loader: 0,
                ..
            } => *offset,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(offs, vec![0x44, 0x40, 0x50]);

    let mut mem = PhysMem::new();
    let v = 2u32;
    let vbase = BASE + 0x40 + 20 * v;
    mem.write(vbase, &[7, 8, 9, 0xEE]).unwrap();
    let pos: Vec<u8> = [1.0f32, -2.0, 0.5]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    mem.write(vbase + 4, &pos).unwrap();
    mem.write(vbase + 16, &(-300i16).to_le_bytes()).unwrap();
    let set = load(&cfg, &mem, v).unwrap();
    assert_eq!(
        set.slots(),
        &[
            [1.0, -2.0, 0.5, 1.0],
            [7.0, 8.0, 9.0, 1.0],
            [-300.0, 0.0, 0.0, 1.0]
        ]
    );
    assert_eq!(
        set.sources[0],
        AttribSource::Buffer {
            loader: 0,
            addr: vbase + 4
        }
    );
}

#[test]
fn padding_codes_align_to_four_then_skip() {
    // (entries, expected offset of attribute 1) with attribute 0 = u8 x1.
    let cases: &[(&[u32], u32)] = &[
        (&[0, 12, 1], 8),  // 1 → align 4 → +4
        (&[0, 13, 1], 12), // +8
        (&[0, 14, 1], 16), // +12
        (&[0, 15, 1], 20), // +16
        (&[12, 0, 1], 5),  // padding first: 0 → +4 = 4; attr0 at 4; attr1 (u8) at 5
        (&[0, 1], 1),
        (&[0, 15, 15, 1], 36),
    ];
    for &(entries, want) in cases {
        let mut r = regs();
        set_format(&mut r, 0, 1, 1);
        set_format(&mut r, 1, 1, 1);
        set_count(&mut r, 2, 0);
        set_loader(&mut r, 0, 0, entries, 64);
        let cfg = LoaderConfig::from_regs(&r);
        match cfg.slots[1] {
            SlotSource::Buffer { offset, .. } => assert_eq!(offset, want, "{entries:?}"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn short_after_odd_byte_aligns_to_two() {
    let mut r = regs();
    set_format(&mut r, 0, 0, 1); // s8
    set_format(&mut r, 1, 2, 2); // s16 x2 → aligned to 2
    set_format(&mut r, 2, 0, 3); // s8 x3 at 6
    set_format(&mut r, 3, 3, 1); // f32 → aligned to 12
    set_count(&mut r, 4, 0);
    set_loader(&mut r, 0, 0, &[0, 1, 2, 3], 16);
    let cfg = LoaderConfig::from_regs(&r);
    let offs: Vec<u32> = cfg.slots[..4]
        .iter()
        .map(|s| {
            if let SlotSource::Buffer { offset, .. } = s {
                *offset
            } else {
                u32::MAX
            }
        })
        .collect();
    assert_eq!(offs, vec![0, 2, 6, 12]);
    assert!(cfg.diagnostics.is_empty(), "{:?}", cfg.diagnostics);
}

#[test]
fn reordered_loaders_map_by_entry_value() {
    // Loader 0 carries attribute 2, loader 1 carries attributes 0 and 1 (reverse order), loader 5
    // carries attribute 3. [P]'s sequential walk would get every slot wrong here.
    let mut r = regs();
    for a in 0..4 {
        set_format(&mut r, a, 1, 1);
    }
    set_count(&mut r, 4, 0);
    set_loader(&mut r, 0, 0x000, &[2], 1);
    set_loader(&mut r, 1, 0x100, &[1, 0], 2);
    set_loader(&mut r, 5, 0x200, &[3], 1);
    let cfg = LoaderConfig::from_regs(&r);
    assert!(cfg.diagnostics.is_empty(), "{:?}", cfg.diagnostics);
    let mut mem = PhysMem::new();
    mem.write(BASE, &[20, 21, 22]).unwrap();
    mem.write(BASE + 0x100, &[10, 0, 11, 1, 12, 2]).unwrap();
    mem.write(BASE + 0x200, &[30, 31, 32]).unwrap();
    let set = load(&cfg, &mem, 2).unwrap();
    let x: Vec<f32> = set.slots().iter().map(|v| v[0]).collect();
    assert_eq!(x, vec![2.0, 12.0, 22.0, 32.0]);
    let loaders: Vec<u8> = set.sources[..4]
        .iter()
        .map(|s| {
            if let AttribSource::Buffer { loader, .. } = s {
                *loader
            } else {
                99
            }
        })
        .collect();
    assert_eq!(loaders, vec![1, 1, 0, 5]);
}

#[test]
fn fixed_default_and_undefined_slots() {
    // Slots: 0 buffer, 1 fixed bit, 2 nothing (undefined), 3 fixed bit but also in a loader
    // (buffer wins), 12 and 13 beyond the formatted range (always fixed).
    let mut r = regs();
    set_format(&mut r, 0, 1, 1);
    set_format(&mut r, 3, 1, 1);
    set_count(&mut r, 14, 0b1010);
    set_loader(&mut r, 0, 0, &[0, 3], 2);
    let cfg = LoaderConfig::from_regs(&r);
    assert_eq!(cfg.slots[1], SlotSource::Fixed);
    assert_eq!(cfg.slots[2], SlotSource::Undefined);
    assert!(matches!(cfg.slots[3], SlotSource::Buffer { .. }));
    assert_eq!(cfg.slots[12], SlotSource::Fixed);
    assert_eq!(cfg.slots[13], SlotSource::Fixed);
    // Slots 4-11 are undefined too.
    let undefined: Vec<u8> = cfg
        .diagnostics
        .iter()
        .filter_map(|d| match d {
            ConfigDiag::UndefinedAttribute { attribute } => Some(*attribute),
            _ => None,
        })
        .collect();
    assert_eq!(undefined, vec![2, 4, 5, 6, 7, 8, 9, 10, 11]);

    let mut mem = PhysMem::new();
    mem.write(BASE, &[5, 6]).unwrap();
    let mut set = AttributeSet::default();
    set.values[2] = [7.0, 7.0, 7.0, 7.0]; // previous contents
    cfg.load_vertex(&mem, &fixed_values(), 0, 0, &mut set)
        .unwrap();
    assert_eq!(set.count, 14);
    assert_eq!(set.values[0], [5.0, 0.0, 0.0, 1.0]);
    assert_eq!(set.values[1], fixed_values()[1]);
    assert_eq!(
        set.values[2], [7.0; 4],
        "undefined slots keep their previous value"
    );
    assert_eq!(set.values[3], [6.0, 0.0, 0.0, 1.0]);
    assert_eq!(set.values[12], fixed_values()[12]);
    assert_eq!(set.values[13], fixed_values()[13]);
    assert_eq!(set.sources[1], AttribSource::Fixed);
    assert_eq!(set.sources[2], AttribSource::Default);
    assert_eq!(set.sources[12], AttribSource::Fixed);
    let rec = set.to_loaded(3, 0);
    assert_eq!(rec.attrs.len(), 14);
    assert_eq!(
        rec.sources[3],
        AttribSource::Buffer {
            loader: 0,
            addr: BASE + 1
        }
    );
}

#[test]
fn config_diagnostics() {
    let mut r = regs();
    set_format(&mut r, 0, 3, 4); // 16 bytes
    set_format(&mut r, 1, 1, 1);
    set_count(&mut r, 1, 0);
    // Loader 0: attr 0 with a stride that is too small, and attr 1 beyond the count.
    set_loader(&mut r, 0, 0, &[0, 1], 8);
    // Loader 1: attr 0 again; 12 entries listed but an entry count of 13.
    set_loader(
        &mut r,
        1,
        0x100,
        &[0, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12],
        200,
    );
    r[REG_ATTRIBBUFFER0_OFFSET + 3 + 2] =
        (r[REG_ATTRIBBUFFER0_OFFSET + 3 + 2] & 0x0FFF_FFFF) | (13 << 28);
    let cfg = LoaderConfig::from_regs(&r);
    assert_eq!(
        cfg.diagnostics,
        vec![
            ConfigDiag::AttributeBeyondCount {
                loader: 0,
                attribute: 1,
                count: 1
            },
            ConfigDiag::StrideTooSmall {
                loader: 0,
                stride: 8,
                layout: 17
            },
            ConfigDiag::TooManyLoaderEntries {
                loader: 1,
                count: 13
            },
            ConfigDiag::AttributeInSeveralLoaders {
                attribute: 0,
                first: 0,
                second: 1
            },
        ]
    );
    // The later loader wins; the 13th entry is ignored.
    assert_eq!(
        cfg.slots[0],
        SlotSource::Buffer {
            loader: 1,
            offset: 0x100,
            stride: 200,
            format: AttribFormat {
                ty: AttribType::Float,
                components: 4
            }
        }
    );
    assert_eq!(cfg.loaders[1].used_entries().len(), 12);
    let d = cfg.diagnostics[1].to_diagnostic(Some(4));
    assert_eq!(d.draw, Some(4));
    assert!(d.detail.contains("stride 8"), "{}", d.detail);
}

#[test]
fn base_address_and_register_fields() {
    let mut r = regs();
    r[REG_ATTRIBBUFFERS_LOC] = 0xFFFF_FFFF;
    r[REG_INDEXBUFFER_CONFIG] = 0x8ABC_DEF0;
    r[REG_NUMVERTICES] = 36;
    r[REG_VERTEX_OFFSET] = 5;
    set_loader(
        &mut r,
        11,
        0xF123_4567,
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        0x99,
    );
    let cfg = LoaderConfig::from_regs(&r);
    assert_eq!(cfg.base, 0xFFFF_FFF0);
    assert_eq!(cfg.index_offset, 0x0ABC_DEF0);
    assert_eq!(cfg.index_format, IndexFormat::U16);
    assert_eq!((cfg.num_vertices, cfg.vertex_offset), (36, 5));
    let l = cfg.loaders[11];
    assert_eq!(l.offset, 0x0123_4567);
    assert_eq!(l.stride, 0x99);
    assert_eq!(l.component_count, 11);
    let want: Vec<LoaderEntry> = (0..11).map(LoaderEntry::Attribute).collect();
    assert_eq!(l.used_entries(), &want[..]);
}

/// Draw ids for k = 0..n under each index mode.
fn ids(cfg: &LoaderConfig, mem: &PhysMem, kind: DrawKind, n: u32) -> Vec<u32> {
    (0..n)
        .map(|k| cfg.vertex_id(mem, kind, k).unwrap())
        .collect()
}

#[test]
fn index_modes() {
    let mut mem = PhysMem::new();
    mem.write(BASE + 0x80, &[3, 0, 0xFF, 1]).unwrap();
    mem.write(BASE + 0x90, &[0x02, 0x01, 0xFF, 0xFF, 0x07, 0x00])
        .unwrap();

    let mut r = regs();
    r[REG_VERTEX_OFFSET] = 10;
    r[REG_INDEXBUFFER_CONFIG] = 0x80;
    let cfg = LoaderConfig::from_regs(&r);
    assert_eq!(ids(&cfg, &mem, DrawKind::Arrays, 3), vec![10, 11, 12]);
    assert_eq!(
        ids(&cfg, &mem, DrawKind::Elements, 4),
        vec![3, 0, 255, 1],
        "u8, no offset"
    );
    assert_eq!(ids(&cfg, &mem, DrawKind::Immediate, 2), vec![0, 1]);

    r[REG_INDEXBUFFER_CONFIG] = 0x8000_0090;
    let cfg = LoaderConfig::from_regs(&r);
    assert_eq!(
        ids(&cfg, &mem, DrawKind::Elements, 3),
        vec![0x0102, 0xFFFF, 7],
        "u16 little-endian; 0xFFFF is an ordinary index"
    );

    r[REG_VERTEX_OFFSET] = u32::MAX;
    let cfg = LoaderConfig::from_regs(&r);
    assert_eq!(
        ids(&cfg, &mem, DrawKind::Arrays, 2),
        vec![u32::MAX, 0],
        "wraps"
    );
}

#[test]
fn index_buffer_outside_memory() {
    let mem = PhysMem::new();
    let mut r = regs();
    r[REG_ATTRIBBUFFERS_LOC] = 0; // base 0: unmapped
    r[REG_INDEXBUFFER_CONFIG] = 0x8000_0010;
    let cfg = LoaderConfig::from_regs(&r);
    assert_eq!(
        cfg.vertex_id(&mem, DrawKind::Elements, 3),
        Err(LoadDiag::IndexUnmapped {
            index_in_draw: 3,
            addr: 0x16,
            len: 2
        })
    );
    // Past the end of VRAM.
    let mut r = regs();
    r[REG_ATTRIBBUFFERS_LOC] = (VRAM.base + VRAM.size - 16) >> 3;
    r[REG_INDEXBUFFER_CONFIG] = 0;
    let cfg = LoaderConfig::from_regs(&r);
    assert!(cfg.vertex_id(&mem, DrawKind::Elements, 15).is_ok());
    let err = cfg.vertex_id(&mem, DrawKind::Elements, 16).unwrap_err();
    assert_eq!(
        err,
        LoadDiag::IndexUnmapped {
            index_in_draw: 16,
            addr: VRAM.end(),
            len: 1
        }
    );
    let diag = err.to_diagnostic(Some(1));
    assert_eq!(
        diag.kind,
        DiagKind::UnmappedRead {
            addr: VRAM.base + VRAM.size,
            len: 1
        }
    );
}

#[test]
fn loader_outside_memory_and_index_out_of_range() {
    let mut r = regs();
    set_format(&mut r, 0, 3, 4);
    set_count(&mut r, 1, 0);
    set_loader(&mut r, 0, 0, &[0], 16);
    let cfg = LoaderConfig::from_regs(&r);
    let mem = PhysMem::new();
    // A huge index pushes the address past FCRAM.
    // The first vertex whose 16 bytes end past FCRAM.
    let v = ((FCRAM.end() - u64::from(BASE)) / 16) as u32;
    assert!(load(&cfg, &mem, v - 1).is_ok());
    assert_eq!(
        load(&cfg, &mem, v),
        Err(LoadDiag::AttributeUnmapped {
            index_in_draw: 0,
            vertex: v,
            attribute: 0,
            loader: 0,
            addr: u64::from(BASE) + 16 * u64::from(v),
            len: 16
        })
    );
    // Address arithmetic past 4 GiB is an error, not a wrap.
    let err = load(&cfg, &mem, u32::MAX).unwrap_err();
    assert!(matches!(err, LoadDiag::AttributeUnmapped { addr, .. } if addr > u64::from(u32::MAX)));
    assert_eq!(
        err.to_diagnostic(None).kind,
        DiagKind::UnmappedRead {
            addr: u32::MAX,
            len: 16
        }
    );

    // A loader whose offset points at unmapped space.
    let mut r2 = r.clone();
    r2[REG_ATTRIBBUFFERS_LOC] = 0x1000_0000 >> 3; // IO space, not modelled as memory
    let cfg = LoaderConfig::from_regs(&r2);
    assert!(matches!(
        load(&cfg, &mem, 0),
        Err(LoadDiag::AttributeUnmapped {
            addr: 0x1000_0000,
            ..
        })
    ));
}

#[test]
fn count_is_capped() {
    let mut r = regs();
    r[REG_NUMVERTICES] = u32::MAX;
    let cfg = LoaderConfig::from_regs(&r);
    let limits = DrawLimits::default();
    let (n, diag) = cfg.planned_count(&limits);
    assert_eq!(n, DEFAULT_MAX_DRAW_VERTICES);
    assert_eq!(
        diag,
        Some(LoadDiag::CountCapped {
            requested: u32::MAX,
            limit: n
        })
    );
    assert_eq!(
        diag.unwrap().to_diagnostic(None).kind,
        DiagKind::DrawTruncated
    );
    r[REG_NUMVERTICES] = 6;
    assert_eq!(
        LoaderConfig::from_regs(&r).planned_count(&limits),
        (6, None)
    );
}

#[test]
fn immediate_vertices() {
    let set = AttributeSet::immediate(&[[1.0, 2.0, 3.0, 4.0], [5.0; 4]]);
    assert_eq!(set.count, 2);
    assert_eq!(set.slots(), &[[1.0, 2.0, 3.0, 4.0], [5.0; 4]]);
    assert_eq!(set.sources[1], AttribSource::Immediate);
    let many = [[0.0; 4]; 20];
    assert_eq!(AttributeSet::immediate(&many).count, 16);
}

#[test]
fn vertex_cache_is_a_fifo() {
    let mut c: VertexCache<u32, 3> = VertexCache::default();
    assert_eq!(c.get(1), None);
    c.insert(1, 100);
    c.insert(2, 200);
    c.insert(3, 300);
    assert_eq!(c.get(1), Some(&100));
    c.insert(4, 400); // evicts id 1 (oldest), even though it was just read
    assert_eq!(c.get(1), None);
    assert_eq!(c.get(4), Some(&400));
    assert_eq!(c.get(2), Some(&200));
    c.clear();
    assert_eq!(c.get(2), None);
    let mut empty: VertexCache<u32, 0> = VertexCache::default();
    empty.insert(1, 1);
    assert_eq!(empty.get(1), None);
}

/// A complete fetch loop as a draw driver runs it: ids from the cursor, attributes from the
/// loader, stop at the first failure. Returns (vertices loaded, diagnostics).
fn fetch_all(
    cfg: &LoaderConfig,
    mem: &PhysMem,
    kind: DrawKind,
    limits: &DrawLimits,
) -> (u32, Vec<LoadDiag>) {
    let (mut cursor, cap) = DrawCursor::new(cfg, kind, limits);
    let mut diags: Vec<LoadDiag> = cap.into_iter().collect();
    let mut set = AttributeSet::default();
    let mut loaded = 0;
    while let Some(next) = cursor.next_id(cfg, mem) {
        let result =
            next.and_then(|(k, id)| cfg.load_vertex(mem, &fixed_values(), k, id, &mut set));
        match result {
            Ok(()) => loaded += 1,
            Err(e) => {
                diags.push(e);
                cursor.stop();
            }
        }
    }
    assert_eq!(cursor.remaining(), 0);
    (loaded, diags)
}

#[test]
fn hostile_vertex_count_is_bounded_in_time_and_memory() {
    // NUMVERTICES = 0xFFFFFFFF with a zero stride: no fetch ever fails, so only the cap stops
    // the draw.
    let mut r = regs();
    set_format(&mut r, 0, 3, 4);
    set_count(&mut r, 1, 0);
    set_loader(&mut r, 0, 0, &[0], 0);
    r[REG_NUMVERTICES] = u32::MAX;
    let cfg = LoaderConfig::from_regs(&r);
    let mem = PhysMem::new();
    let start = std::time::Instant::now();
    let (loaded, diags) = fetch_all(&cfg, &mem, DrawKind::Arrays, &DrawLimits::default());
    let elapsed = start.elapsed();
    assert_eq!(loaded, DEFAULT_MAX_DRAW_VERTICES);
    assert_eq!(
        diags,
        vec![LoadDiag::CountCapped {
            requested: u32::MAX,
            limit: DEFAULT_MAX_DRAW_VERTICES
        }]
    );
    assert!(elapsed.as_secs() < 20, "capped fetch loop took {elapsed:?}");
}

#[test]
fn count_beyond_memory_stops_at_the_first_bad_fetch() {
    // 64-byte vertices from 0x100 below the end of VRAM: 4 good vertices, then a diagnostic.
    let mut r = regs();
    set_format(&mut r, 0, 3, 4);
    set_count(&mut r, 1, 0);
    set_loader(&mut r, 0, 0, &[0], 64);
    r[REG_ATTRIBBUFFERS_LOC] = (VRAM.base + VRAM.size - 0x100) >> 3;
    r[REG_NUMVERTICES] = 0x7FFF_FFFF;
    let cfg = LoaderConfig::from_regs(&r);
    let mem = PhysMem::new();
    let (loaded, diags) = fetch_all(&cfg, &mem, DrawKind::Arrays, &DrawLimits::default());
    assert_eq!(loaded, 4);
    assert_eq!(diags.len(), 2, "{diags:?}");
    assert!(matches!(diags[0], LoadDiag::CountCapped { .. }));
    assert!(matches!(
        diags[1],
        LoadDiag::AttributeUnmapped {
            index_in_draw: 4,
            vertex: 4,
            ..
        }
    ));
}

#[test]
fn bad_indices_stop_the_draw() {
    // Index buffer: 0, 1, 0xFFFF (points far past the attribute data in VRAM), 2.
    let mut r = regs();
    set_format(&mut r, 0, 3, 4);
    set_count(&mut r, 1, 0);
    set_loader(&mut r, 0, 0, &[0], 16);
    r[REG_ATTRIBBUFFERS_LOC] = (VRAM.base + VRAM.size - 0x1000) >> 3;
    r[REG_INDEXBUFFER_CONFIG] = 0x8000_0000 | 0x800;
    r[REG_NUMVERTICES] = 4;
    let cfg = LoaderConfig::from_regs(&r);
    let mut mem = PhysMem::new();
    mem.write(cfg.base + 0x800, &[0, 0, 1, 0, 0xFF, 0xFF, 2, 0])
        .unwrap();
    let (loaded, diags) = fetch_all(&cfg, &mem, DrawKind::Elements, &DrawLimits::default());
    assert_eq!(loaded, 2);
    assert!(
        matches!(
            diags[..],
            [LoadDiag::AttributeUnmapped {
                index_in_draw: 2,
                vertex: 0xFFFF,
                ..
            }]
        ),
        "{diags:?}"
    );
    // An index buffer outside memory (0x19000000, between VRAM and the N3DS RAM) stops at k = 0.
    r[REG_INDEXBUFFER_CONFIG] = 0x8000_0000 | (0x1900_0000 - cfg.base);
    let cfg = LoaderConfig::from_regs(&r);
    let (loaded, diags) = fetch_all(&cfg, &mem, DrawKind::Elements, &DrawLimits::default());
    assert_eq!(loaded, 0);
    assert!(
        matches!(
            diags[..],
            [LoadDiag::IndexUnmapped {
                index_in_draw: 0,
                ..
            }]
        ),
        "{diags:?}"
    );
}
