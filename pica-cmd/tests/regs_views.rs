//! Every typed register view round-trips through its raw word (raw -> view -> raw keeps exactly
//! the bits the layout's fields cover), covers its whole layout, and decodes from a layout that
//! is the catalogue's own; enums decode unknown encodings as `Unknown(raw)`.

use pica_cmd::regs::external::{self, *};
use pica_cmd::regs::framebuffer::*;
use pica_cmd::regs::lighting::*;
use pica_cmd::regs::pipeline::*;
use pica_cmd::regs::rasterizer::*;
use pica_cmd::regs::shader::*;
use pica_cmd::regs::tev::*;
use pica_cmd::regs::texturing::*;
use pica_cmd::regs::{self, Field, RegView, covered_mask};
use proptest::prelude::*;

fn check<V: RegView + core::fmt::Debug + PartialEq>(raw: u32) -> Result<(), TestCaseError> {
    let view = V::from_raw(raw);
    let back = view.to_raw();
    prop_assert_eq!(
        back,
        raw & covered_mask(V::LAYOUT),
        "raw {:#010x} -> {:?}",
        raw,
        view
    );
    // Decoding the re-encoded word gives the same view.
    prop_assert_eq!(V::from_raw(back), view);
    Ok(())
}

/// Whether `layout` is the field list of some catalogued internal or external register.
fn layout_is_catalogued(layout: &'static [Field]) -> bool {
    regs::all().any(|d| core::ptr::eq(d.fields, layout) || d.fields == layout)
        || external::all().any(|d| core::ptr::eq(d.fields, layout) || d.fields == layout)
}

macro_rules! views {
    (registers: $($t:ty),* ; data_formats: $($d:ty),* $(;)?) => {
        proptest! {
            #[test]
            fn register_views_round_trip(raw in any::<u32>()) {
                $( check::<$t>(raw)?; )*
            }

            #[test]
            fn data_format_views_round_trip(raw in any::<u32>()) {
                $( check::<$d>(raw)?; )*
            }
        }

        #[test]
        fn views_cover_their_whole_layout() {
            $(
                assert_eq!(
                    <$t>::from_raw(u32::MAX).to_raw(),
                    covered_mask(<$t as RegView>::LAYOUT),
                    "{} leaves layout bits unused",
                    stringify!($t)
                );
                assert_eq!(<$t>::from_raw(0).to_raw(), 0, "{}", stringify!($t));
            )*
            $(
                assert_eq!(
                    <$d>::from_raw(u32::MAX).to_raw(),
                    covered_mask(<$d as RegView>::LAYOUT),
                    "{}",
                    stringify!($d)
                );
            )*
        }

        #[test]
        fn register_views_decode_catalogued_layouts() {
            $(
                assert!(
                    layout_is_catalogued(<$t as RegView>::LAYOUT),
                    "{}'s layout is not a catalogue entry's",
                    stringify!($t)
                );
            )*
        }
    };
}

views! {
    registers:
        OutMap, ScissorPos, ScissorDim, ViewportXy, RenderbufDim, OutAttrClock,
        TexUnitConfig, TexDim, TexParam, TexLod, TexShadow,
        TevSources, TevOperands, TevCombiner, TevScales, TexEnvUpdateBuffer,
        ProcTex0, ProcTexNoise, ProcTexFrequency, ProcTex4, ProcTexOffsets, ProcTexLut,
        ColorOperation, BlendFunc, AlphaTest, StencilTest, StencilOps, DepthColorMask,
        DepthStencilAccess, ColorBufferFormat, FramebufferDim, GasLightXy, GasLightZ,
        GasLightZColor, GasDeltaZDepth, FragOpShadow,
        LightColor, LightConfig, LightingConfig0, LightingConfig1, LightingLutIndex,
        LutInputAbs, LutInputSelect, LutInputScale, LightPermutation,
        AttribFormatLow, AttribFormatHigh, LoaderConfig1, LoaderConfig2, IndexBufferConfig,
        GeoStageConfig, GeoStageConfig2, GshMisc0, GshMisc1, PrimitiveConfig,
        IntUniform, InputBufferConfig, FloatUniformIndex, PermutationLow, PermutationHigh,
        MemoryFillControl, Dimensions, TransferFlags, TextureCopyLine, FramebufferFormat, LcdFill;
    data_formats:
        ProcTexLutEntry, ProcTexColorDiff, FogLutEntry, LightingLutEntry;
}

proptest! {
    #[test]
    fn tev_stage_round_trips_through_its_five_words(words in any::<[u32; 5]>()) {
        let stage = TevStage::from_words(words);
        let layouts = [
            covered_mask(<TevSources as RegView>::LAYOUT),
            covered_mask(<TevOperands as RegView>::LAYOUT),
            covered_mask(<TevCombiner as RegView>::LAYOUT),
            u32::MAX,
            covered_mask(<TevScales as RegView>::LAYOUT),
        ];
        let expect: Vec<u32> = words.iter().zip(layouts).map(|(w, m)| w & m).collect();
        prop_assert_eq!(stage.to_words().to_vec(), expect);
    }

    #[test]
    fn enums_never_panic_and_round_trip(raw in any::<u32>()) {
        prop_assert_eq!(CompareFunc::from_raw(raw).raw(), raw);
        prop_assert_eq!(CullMode::from_raw(raw).raw(), raw);
        prop_assert_eq!(TevSource::from_raw(raw).raw(), raw);
        prop_assert_eq!(TextureFormat::from_raw(raw).raw(), raw);
        prop_assert_eq!(WrapMode::from_raw(raw).raw(), raw);
        prop_assert_eq!(LightingLut::from_raw(raw).raw(), raw);
        prop_assert_eq!(OutputSemantic::from_raw(raw).raw(), raw);
        prop_assert_eq!(ExternalColorFormat::from_raw(raw).raw(), raw);
        prop_assert_eq!(LoaderEntry::from_code(raw).code(), raw & 0xF);
    }
}

#[test]
fn enum_unknown_encodings() {
    assert_eq!(CullMode::from_raw(3), CullMode::Unknown(3));
    assert_eq!(CullMode::from_raw(3).name(), None);
    assert_eq!(CullMode::from_raw(3).to_string(), "UNKNOWN(3)");
    assert_eq!(CompareFunc::from_raw(4), CompareFunc::Less);
    assert_eq!(CompareFunc::from_raw(4).to_string(), "LESS");
    assert_eq!(CompareFunc::from_raw(8), CompareFunc::Unknown(8));
    assert_eq!(TevSource::from_raw(7), TevSource::Unknown(7));
    assert_eq!(TevSource::from_raw(13), TevSource::PreviousBuffer);
    assert_eq!(TevScale::from_raw(3), TevScale::Unknown(3));
    assert_eq!(TextureFormat::from_raw(14), TextureFormat::Unknown(14));
    assert_eq!(BlendEquation::from_raw(5), BlendEquation::Unknown(5));
    assert_eq!(DepthFormat::from_raw(1), DepthFormat::Unknown(1));
    assert_eq!(LightEnvConfig::from_raw(7), LightEnvConfig::Unknown(7));
    assert_eq!(LightEnvConfig::from_raw(8), LightEnvConfig::Config7);
    assert_eq!(LutScale::from_raw(4).factor(), None);
    assert_eq!(LutScale::from_raw(6).factor(), Some(0.25));
    assert_eq!(
        OutputSemantic::from_raw(0x11),
        OutputSemantic::Unknown(0x11)
    );
    assert_eq!(ScissorMode::from_raw(2), ScissorMode::Unknown(2));
    assert_eq!(FogMode::from_raw(1), FogMode::Unknown(1));
    assert_eq!(ShaderUnitMode::from_raw(0xA0), ShaderUnitMode::VertexShader);
    assert_eq!(ShaderUnitMode::from_raw(0x00), ShaderUnitMode::Unknown(0));
    // Unknown values survive a view round trip.
    let mask = DepthColorMask::from_raw(0x0000_0070);
    assert_eq!(mask.depth_func, CompareFunc::GreaterEqual);
    let s = StencilOps::from_raw(0x777);
    assert_eq!(s.z_pass, StencilOp::DecrementWrap);
    // The describe text of an unknown encoding.
    let d = regs::describe(0x040, 3);
    assert_eq!(d.fields[0].meaning, "unknown (3)");
}

#[test]
fn loader_entries() {
    assert_eq!(LoaderEntry::from_code(5), LoaderEntry::Attribute(5));
    assert_eq!(LoaderEntry::from_code(12).padding_bytes(), 4);
    assert_eq!(LoaderEntry::from_code(15).padding_bytes(), 16);
    assert_eq!(LoaderEntry::Attribute(11).padding_bytes(), 0);
}
