//! Command-list tests on a real command stream: ctrulib's 2014 GPU reset sequence
//! (`fixtures/gpuResetSequence.pica_cmdlist.bin`, provenance in `fixtures/PROVENANCE.md`).

use pica_cmd::cmdlist::{self, Diagnostic, EncodeStrategy, Form};

const RESET: &[u8] = include_bytes!("fixtures/gpuResetSequence.pica_cmdlist.bin");

#[test]
fn reset_sequence_parses_into_167_single_writes() {
    let list = cmdlist::parse(RESET).expect("the real list is well formed");
    assert_eq!(RESET.len(), 1336);
    assert_eq!(list.commands.len(), 167);
    assert_eq!(list.writes.len(), 167);
    assert!(
        list.commands
            .iter()
            .all(|c| c.form() == Form::Single && c.padding.is_none())
    );
    // Every write targets an existing register.
    assert!(list.writes.iter().all(|w| w.id < cmdlist::REGISTER_COUNT));
    // Only the size diagnostic can appear: 1336 is not a multiple of 16.
    assert_eq!(
        list.diagnostics,
        vec![Diagnostic::SizeNotMultipleOf16 { len: 1336 }]
    );
    // First commands, checked by hand against the hex dump.
    let first: Vec<_> = list
        .writes
        .iter()
        .take(3)
        .map(|w| (w.offset, w.id, w.mask, w.value))
        .collect();
    assert_eq!(
        first,
        vec![
            (0, 0x1D4, 0xF, 1),
            (8, 0x0AE, 0xF, 0xFEFC_F8F0),
            (16, 0x04D, 0xF, 0x00BF_0000)
        ]
    );
    // A masked write: 0x080 (TEXUNIT config) is written with mask 0x2 at offset 0x90.
    let w = list
        .writes
        .iter()
        .find(|w| w.offset == 0x90)
        .expect("write at 0x90");
    assert_eq!((w.id, w.mask, w.value), (0x080, 0x2, 0x1000));
}

#[test]
fn reset_sequence_reencodes_byte_identically() {
    let list = cmdlist::parse(RESET).expect("parse");
    assert_eq!(list.encode(), RESET);
    // The writes alone, encoded one command per write, also give the original bytes (the
    // sequence has no bursts and no padding).
    let writes: Vec<_> = list.reg_writes().collect();
    assert_eq!(
        cmdlist::encode_writes(&writes, EncodeStrategy::SingleOnly).expect("encode"),
        RESET
    );
    // The automatic strategy merges runs into bursts: shorter, same writes.
    let auto = cmdlist::encode_writes(&writes, EncodeStrategy::Auto).expect("encode");
    assert!(auto.len() < RESET.len());
    let back: Vec<_> = cmdlist::parse(&auto).expect("parse").reg_writes().collect();
    assert_eq!(back, writes);
}

#[test]
fn reset_sequence_truncated_anywhere_keeps_the_writes_before() {
    for cut in 1..RESET.len() {
        let prefix = &RESET[..cut];
        match cmdlist::parse(prefix) {
            Ok(_) => assert_eq!(cut % 8, 0, "only whole commands parse cleanly (cut {cut})"),
            Err(e) => {
                assert_eq!(
                    e.offset as usize,
                    cut / 8 * 8,
                    "error points at the broken command (cut {cut})"
                );
                assert_eq!(e.partial.writes.len(), cut / 8);
            }
        }
    }
}

#[test]
fn reset_sequence_has_every_register_named_by_the_catalogue() {
    let list = cmdlist::parse(RESET).expect("parse");
    let unnamed: Vec<String> = list
        .writes
        .iter()
        .filter(|w| pica_cmd::regs::lookup(w.id).is_none())
        .map(|w| format!("0x{:03X} at offset 0x{:X}", w.id, w.offset))
        .collect();
    assert!(
        unnamed.is_empty(),
        "registers without a catalogue entry: {unnamed:?}"
    );
    // And `describe` gives each a real name, not the generic fallback.
    for w in &list.writes {
        let d = pica_cmd::regs::describe(w.id, w.value);
        assert!(
            d.known && !d.name.starts_with("unknown"),
            "0x{:03X}: {}",
            w.id,
            d.name
        );
    }
}
