//! Opening files: CiTrace (`.ctf`), shader binaries (`.shbin`, DVLB/DVOJ) and raw PICA command
//! lists, detected by their magic bytes rather than by extension.
//!
//! Stage: viewer input. Input: a path (or bytes). Output: [`Opened`], a trace with its replay
//! worker already started, or a parsed shader file. Every failure is a message for the UI,
//! never a panic. A raw command list is wrapped into an in-memory trace (the list loaded at the
//! start of FCRAM and submitted through the P3D command-list registers, the way Citra records
//! a submission), so the whole viewer works on it.

use std::io::Read;
use std::path::{Path, PathBuf};

use gpu_core::memory::FCRAM;
use pica_cmd::citrace::{CiTrace, CiTraceBuilder, InitialState, MAGIC};
use shader_unit::dvlb::{DVLB_MAGIC, DVOJ_MAGIC, Dvlb, ShaderFile, parse_shader_file};

use super::listing::ShaderListing;
use super::worker::{ReplaySettings, Waker, WorkerHandle, spawn_with};

/// Largest shader binary or command list read into memory (traces are read lazily).
pub const MAX_IN_MEMORY: u64 = 256 << 20;

/// What kind of file was opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A CiTrace.
    Trace,
    /// A raw command list wrapped into a trace.
    CommandList,
    /// A shader binary.
    Shader,
}

/// Facts about an opened trace, for the title bar and the log.
#[derive(Clone, Debug)]
pub struct TraceInfo {
    /// The file.
    pub path: PathBuf,
    /// Trace or command list.
    pub kind: FileKind,
    /// File size in bytes.
    pub file_len: u64,
    /// Stream elements.
    pub elements: usize,
    /// Reader warnings, as text.
    pub warnings: Vec<String>,
}

/// A parsed shader binary.
#[derive(Clone, Debug)]
pub struct ShaderDoc {
    /// The file.
    pub path: PathBuf,
    /// The parsed (or linked) DVLB.
    pub dvlb: Dvlb,
    /// Disassembly per DVLE (or the error text).
    pub listings: Vec<Result<ShaderListing, String>>,
}

/// A successfully opened file.
#[derive(Debug)]
pub enum Opened {
    /// A trace (or wrapped command list) whose worker is indexing it.
    Trace {
        /// File facts.
        info: TraceInfo,
        /// The replay worker.
        worker: WorkerHandle,
    },
    /// A shader binary.
    Shader(Box<ShaderDoc>),
}

/// Opens `path`, detecting its kind from its first bytes.
pub fn open_path(path: &Path, waker: Waker) -> Result<Opened, String> {
    open_path_with(path, waker, ReplaySettings::default())
}

/// [`open_path`], replaying a trace under `settings`.
pub fn open_path_with(
    path: &Path,
    waker: Waker,
    settings: ReplaySettings,
) -> Result<Opened, String> {
    let mut f =
        std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let len = f
        .metadata()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    let mut magic = [0u8; 4];
    let n = f
        .read(&mut magic)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if n == 4 && magic == MAGIC {
        let trace = CiTrace::open(path)
            .map_err(|e| format!("{} is not a valid CiTrace: {e}", path.display()))?;
        let info = TraceInfo {
            path: path.to_path_buf(),
            kind: FileKind::Trace,
            file_len: len,
            elements: trace.elements().len(),
            warnings: trace.warnings().iter().map(|w| w.to_string()).collect(),
        };
        let worker = spawn_with(trace, waker, settings)
            .map_err(|e| format!("cannot start the replay thread: {e}"))?;
        return Ok(Opened::Trace { info, worker });
    }
    if len > MAX_IN_MEMORY {
        return Err(format!(
            "{} is {len} bytes: too large for a shader binary or command list (limit {MAX_IN_MEMORY})",
            path.display()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    open_bytes_with(path, bytes, waker, settings)
}

/// Opens a file's contents (`path` only names it).
pub fn open_bytes(path: &Path, bytes: Vec<u8>, waker: Waker) -> Result<Opened, String> {
    open_bytes_with(path, bytes, waker, ReplaySettings::default())
}

/// [`open_bytes`], replaying a trace under `settings`.
pub fn open_bytes_with(
    path: &Path,
    bytes: Vec<u8>,
    waker: Waker,
    settings: ReplaySettings,
) -> Result<Opened, String> {
    let magic = bytes.get(..4);
    if magic == Some(&MAGIC[..]) {
        let len = bytes.len() as u64;
        let trace = CiTrace::from_bytes(bytes)
            .map_err(|e| format!("{} is not a valid CiTrace: {e}", path.display()))?;
        let info = TraceInfo {
            path: path.to_path_buf(),
            kind: FileKind::Trace,
            file_len: len,
            elements: trace.elements().len(),
            warnings: trace.warnings().iter().map(|w| w.to_string()).collect(),
        };
        let worker = spawn_with(trace, waker, settings)
            .map_err(|e| format!("cannot start the replay thread: {e}"))?;
        return Ok(Opened::Trace { info, worker });
    }
    if magic == Some(&DVLB_MAGIC[..]) || magic == Some(&DVOJ_MAGIC[..]) {
        let file = parse_shader_file(&bytes)
            .map_err(|e| format!("{} is not a valid shader binary: {e}", path.display()))?;
        let dvlb = match file {
            ShaderFile::Dvlb(d) => d,
            ShaderFile::Dvoj(o) => o.to_dvlb(),
        };
        let listings = (0..dvlb.dvles.len().max(1))
            .map(|i| ShaderListing::from_dvlb(&dvlb, i))
            .collect();
        return Ok(Opened::Shader(Box::new(ShaderDoc {
            path: path.to_path_buf(),
            dvlb,
            listings,
        })));
    }
    command_list(path, &bytes, waker, settings)
}

/// Wraps a raw command list into a one-submission trace and opens it.
fn command_list(
    path: &Path,
    bytes: &[u8],
    waker: Waker,
    settings: ReplaySettings,
) -> Result<Opened, String> {
    if bytes.is_empty() {
        return Err(format!("{} is empty", path.display()));
    }
    // Parse first so that a file that is not a command list at all says so.
    let parsed = pica_cmd::cmdlist::parse(bytes);
    if let Err(e) = &parsed
        && bytes.len() < 8
    {
        return Err(format!(
            "{} is neither a CiTrace, a shader binary nor a command list: {e}",
            path.display()
        ));
    }
    let mut warnings = Vec::new();
    if let Err(e) = parsed {
        warnings.push(format!(
            "the command list is malformed ({e}); it is replayed up to the problem"
        ));
    }
    let mut b = CiTraceBuilder::new(InitialState::citra_sized());
    b.submit_command_list(FCRAM.base, bytes)
        .map_err(|e| format!("cannot wrap the command list: {e}"))?;
    b.frame_marker();
    let trace_bytes = b
        .build()
        .map_err(|e| format!("cannot wrap the command list: {e}"))?;
    let trace = CiTrace::from_bytes(trace_bytes)
        .map_err(|e| format!("cannot wrap the command list: {e}"))?;
    let info = TraceInfo {
        path: path.to_path_buf(),
        kind: FileKind::CommandList,
        file_len: bytes.len() as u64,
        elements: trace.elements().len(),
        warnings,
    };
    let worker = spawn_with(trace, waker, settings)
        .map_err(|e| format!("cannot start the replay thread: {e}"))?;
    Ok(Opened::Trace { info, worker })
}
