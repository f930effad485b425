//! Property tests of the command-list parser and encoder: encode-then-parse is the identity,
//! parse-then-encode reproduces the bytes, and arbitrary bytes never panic.

use pica_cmd::cmdlist::{
    self, CmdListBuilder, Commands, EncodeStrategy, ExtraParamWidth, Form, ParseOptions, RegWrite,
    Writes,
};
use proptest::prelude::*;

/// Writes biased towards runs (so bursts are exercised) over the whole 16-bit id space.
fn arb_writes() -> impl Strategy<Value = Vec<RegWrite>> {
    let one = (0u16..=0xFFFF, 0u8..16, any::<u32>()).prop_map(|(id, mask, value)| RegWrite {
        id,
        mask,
        value,
    });
    let run = (
        0u16..0x300,
        0u8..16,
        prop::collection::vec(any::<u32>(), 1..300),
        any::<bool>(),
    )
        .prop_map(|(id, mask, values, consecutive)| {
            values
                .into_iter()
                .enumerate()
                .map(|(k, value)| RegWrite {
                    id: if consecutive {
                        id.saturating_add(k as u16)
                    } else {
                        id
                    },
                    mask,
                    value,
                })
                .collect::<Vec<_>>()
        });
    prop::collection::vec(prop_oneof![one.prop_map(|w| vec![w]), run], 0..12)
        .prop_map(|chunks| chunks.into_iter().flatten().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn encode_then_parse_is_identity(writes in arb_writes()) {
        for strategy in [EncodeStrategy::Auto, EncodeStrategy::SingleOnly] {
            let bytes = cmdlist::encode_writes(&writes, strategy).expect("masks are 4-bit");
            prop_assert_eq!(bytes.len() % 8, 0);
            let list = cmdlist::parse(&bytes).expect("encoder output parses");
            let back: Vec<RegWrite> = list.reg_writes().collect();
            prop_assert_eq!(&back, &writes);
            // And re-encoding the parsed list reproduces the encoder's bytes.
            prop_assert_eq!(list.encode(), bytes);
        }
    }

    #[test]
    fn auto_is_never_longer_than_single(writes in arb_writes()) {
        let auto = cmdlist::encode_writes(&writes, EncodeStrategy::Auto).expect("encode");
        let single = cmdlist::encode_writes(&writes, EncodeStrategy::SingleOnly).expect("encode");
        prop_assert!(auto.len() <= single.len());
    }

    #[test]
    fn explicit_forms_round_trip(
        id in 0u16..0x300,
        mask in 0u8..16,
        values in prop::collection::vec(any::<u32>(), 1..=256),
        padding in any::<u32>(),
    ) {
        for form in [Form::Consecutive, Form::Repeated] {
            let mut b = CmdListBuilder::new();
            b.padding_value(padding);
            b.command(form, id, mask, &values).expect("fits in one command");
            let bytes = b.to_bytes();
            let list = cmdlist::parse(&bytes).expect("parse");
            prop_assert_eq!(list.commands.len(), 1);
            let expected_form = if values.len() == 1 { Form::Single } else { form };
            prop_assert_eq!(list.commands[0].form(), expected_form);
            prop_assert_eq!(list.commands[0].padding, (values.len() % 2 == 0).then_some(padding));
            prop_assert_eq!(list.encode(), bytes);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_reencode(bytes in prop::collection::vec(any::<u8>(), 0..600), wide in any::<bool>()) {
        let options = ParseOptions {
            extra_param_width: if wide { ExtraParamWidth::Bits11 } else { ExtraParamWidth::Bits8 },
        };
        match cmdlist::parse_with(&bytes, options) {
            Ok(list) => prop_assert_eq!(list.encode(), bytes.clone()),
            Err(e) => {
                prop_assert!((e.offset as usize) <= bytes.len());
                // Everything before the error re-encodes to the prefix it came from.
                let prefix = e.partial.encode();
                prop_assert_eq!(&bytes[..prefix.len()], &prefix[..]);
                prop_assert_eq!(prefix.len(), e.offset as usize);
            }
        }
        // The iterator terminates and agrees with `parse_with` on the number of commands.
        let n = Commands::with_options(&bytes, options).take_while(Result::is_ok).count();
        let parsed = cmdlist::parse_with(&bytes, options).map(|l| l.commands.len()).unwrap_or_else(|e| e.partial.commands.len());
        prop_assert_eq!(n, parsed);
    }
}

/// Well-formed command lists built word by word with arbitrary headers (any id, mask, flag and
/// reserved bits, small counts) and arbitrary padding values, optionally cut short.
fn arb_list() -> impl Strategy<Value = Vec<u8>> {
    let command = (
        any::<u16>(),
        0u32..16,
        0u32..5,
        0u32..8,
        any::<bool>(),
        any::<u32>(),
        prop::collection::vec(any::<u32>(), 5),
    )
        .prop_map(|(id, mask, extra, reserved, consecutive, pad, params)| {
            let id = if consecutive { id.min(0xFFF0) } else { id };
            let header = u32::from(id)
                | mask << 16
                | extra << 20
                | reserved << 28
                | u32::from(consecutive) << 31;
            let mut words = vec![params[0], header];
            words.extend_from_slice(&params[1..=extra as usize]);
            if words.len() % 2 == 1 {
                words.push(pad);
            }
            words
        });
    (
        prop::collection::vec(command, 0..40),
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|(cmds, cut, do_cut)| {
            let bytes: Vec<u8> = cmds
                .into_iter()
                .flatten()
                .flat_map(u32::to_le_bytes)
                .collect();
            if do_cut && !bytes.is_empty() {
                bytes[..cut.index(bytes.len())].to_vec()
            } else {
                bytes
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn structured_lists_reencode_exactly(bytes in arb_list()) {
        // The allocation-free iterator yields exactly the writes `parse` collects, then the error.
        let iter: Vec<_> = Writes::new(&bytes).collect();
        let (ok, err): (Vec<_>, Vec<_>) = iter.into_iter().partition(Result::is_ok);
        let ok: Vec<_> = ok.into_iter().filter_map(Result::ok).collect();
        match cmdlist::parse(&bytes) {
            Ok(list) => {
                prop_assert_eq!(&ok, &list.writes);
                prop_assert!(err.is_empty());
            }
            Err(e) => {
                prop_assert_eq!(&ok, &e.partial.writes);
                prop_assert_eq!(err.len(), 1);
            }
        }
        match cmdlist::parse(&bytes) {
            Ok(list) => {
                prop_assert_eq!(list.encode(), bytes.clone());
                // Write offsets point at the parameter words they carry.
                for w in &list.writes {
                    let at = w.offset as usize;
                    prop_assert_eq!(u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()), w.value);
                }
            }
            Err(e) => {
                let prefix = e.partial.encode();
                prop_assert_eq!(prefix.len(), e.offset as usize);
                prop_assert_eq!(&bytes[..prefix.len()], &prefix[..]);
            }
        }
    }
}
