//! libstreamtrace: the streaming trace decoder as a C library.
//!
//! Opaque handles (`StConfig`, `StImage`, `StDecoder`) are created and freed explicitly;
//! every call returns a status (`StStatus`), and the message of the last failing call on
//! the thread is `st_last_error()`. No panic crosses the boundary: each call catches
//! unwinding and returns `ST_ERR_PANIC`. Guide and example: docs/decoder.md,
//! examples/c/decode.c.

#![allow(clippy::missing_safety_doc)]

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use streamtrace_isa::SectionImage;
use streamtrace_model::container::{ContainerItem, ContainerReader};
use streamtrace_model::Config;
use streamtrace_sw_decoder::{Step, StreamDecoder, TraceElement};

/// Status of a call. Negative values are errors (`st_last_error()` says why).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StStatus {
    /// Done; for `st_decoder_next`, `*element` holds an element.
    StOk = 0,
    /// The decoder used every buffered byte it can: push more, or call `st_decoder_finish`.
    StNeedInput = 1,
    /// The trace is over (after END, or the input finished); nothing more will come.
    StEnd = 2,
    /// `st_decoder_read_addresses` stopped before an element that is not a stream:
    /// `st_decoder_next` returns it.
    StElementPending = 3,
    /// A required pointer was NULL.
    StErrNull = -1,
    /// A string argument is not UTF-8.
    StErrUtf8 = -2,
    /// The configuration string is invalid.
    StErrConfig = -3,
    /// An image could not be built (unreadable or malformed ELF, overlapping sections).
    StErrImage = -4,
    /// The call is not valid now (e.g. pushing after `st_decoder_finish`).
    StErrState = -5,
    /// A bug inside the library: a panic was caught at the boundary.
    StErrPanic = -6,
    /// A trace file (`st_decoder_new_from_file`) is not one, is truncated, damaged in its
    /// framing, has bytes after its trailer, or decoded to another instruction count than
    /// its trailer records. Returned after everything decoded before the problem.
    StErrTraceFile = -7,
}

/// Kind of a decoded element.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StElementKind {
    /// Executed instructions: for the stream schemes one stream (`address`, `length`); for
    /// `pft` a run of instructions decoded together. Their addresses:
    /// `st_decoder_element_addresses`.
    StElemInstructions = 1,
    /// The previous instructions ended because an exception was taken.
    StElemException = 2,
    /// A sync marker: state reset, decoding can start here.
    StElemSync = 3,
    /// The trace module dropped records: `lost` instructions are missing here.
    StElemOverflow = 4,
    /// The trace ended cleanly (END record).
    StElemEnd = 5,
    /// A decode error at `bit_offset` (message: `st_decoder_error_message`); the decoder
    /// then looks for the next sync marker.
    StElemError = 6,
    /// Decoding resumed in the reset state after the sync marker ending at `bit_offset`.
    StElemResync = 7,
}

/// One decoded element.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StElement {
    pub kind: StElementKind,
    /// Bit offset in the trace of the record the element comes from (0 for the
    /// Instructions of a `pft` run and for addresses left over by
    /// `st_decoder_read_addresses`: only escapes carry an offset there).
    pub bit_offset: u64,
    /// Instructions: the first instruction's address (bit 0 clear).
    pub address: u32,
    /// Instructions: 1 if the first instruction is Thumb, 0 if ARM.
    pub thumb: u32,
    /// Instructions: how many.
    pub length: u32,
    /// Overflow: instructions lost.
    pub lost: u32,
}

impl StElement {
    fn new(kind: StElementKind, bit_offset: u64) -> Self {
        StElement { kind, bit_offset, address: 0, thumb: 0, length: 0, lost: 0 }
    }
}

/// A trace module configuration (the string form, e.g. `rsdc-32x4-128`, `pft`).
pub struct StConfig {
    cfg: Config,
}

/// A program image: sections of bytes at addresses and the loadable segments of ELF files.
pub struct StImage {
    image: Arc<SectionImage>,
}

/// A streaming decoder.
pub struct StDecoder {
    /// `None` until a trace file's header has been read (`file`).
    dec: Option<StreamDecoder<Arc<SectionImage>>>,
    /// Reading a trace file (docs/trace-format.md section 12) rather than a bare bit stream.
    file: Option<TraceFile>,
    /// The configuration (a trace file's once its header is read).
    config: Option<Config>,
    /// Addresses decoded and not yet handed out, in interworking form (bit 0 = Thumb).
    spill: Vec<u32>,
    /// The addresses of the last Instructions element returned by `st_decoder_next`.
    element_addrs: Vec<u32>,
    /// A step decoded after addresses still in `spill`.
    queued: Option<Step>,
    error_message: CString,
    finished: bool,
    /// Instructions handed out, and lost in overflows; whether an Error element was
    /// returned (the trailer's count is only compared for a clean decode).
    delivered: u64,
    lost: u64,
    had_error: bool,
}

/// The container side of a decoder made by `st_decoder_new_from_file`.
struct TraceFile {
    reader: ContainerReader,
    image: Arc<SectionImage>,
    /// Instructions the trailer records, once read.
    trailer_instructions: Option<u64>,
    /// The first problem with the file; reported once the decoder has used what came before.
    error: Option<String>,
}

impl StDecoder {
    /// A bare-stream decoder for `cfg`, or (`cfg` None) one that reads a trace file.
    fn with(cfg: Option<Config>, image: &Arc<SectionImage>) -> StDecoder {
        let file = cfg.is_none().then(|| TraceFile {
            reader: ContainerReader::new(),
            image: Arc::clone(image),
            trailer_instructions: None,
            error: None,
        });
        StDecoder {
            dec: cfg.as_ref().map(|c| StreamDecoder::new(c, Arc::clone(image))),
            file,
            config: cfg,
            spill: Vec::new(),
            element_addrs: Vec::new(),
            queued: None,
            error_message: CString::default(),
            finished: false,
            delivered: 0,
            lost: 0,
            had_error: false,
        }
    }

    /// Hand what the container reader has to the decoder (creating it at the header).
    fn pump(&mut self) {
        let Some(f) = &mut self.file else { return };
        while f.error.is_none() {
            match f.reader.next_item() {
                Ok(Some(ContainerItem::Header(h))) => match h.config.parse::<Config>() {
                    Ok(cfg) => {
                        self.dec = Some(StreamDecoder::new(&cfg, Arc::clone(&f.image)));
                        self.config = Some(cfg);
                    }
                    Err(e) => f.error = Some(format!("trace file: the header's configuration '{}' is invalid: {e}", h.config)),
                },
                Ok(Some(ContainerItem::Data { bytes, .. })) => {
                    if let Some(d) = &mut self.dec {
                        d.push(&bytes);
                    }
                }
                // The decoder reports the gap as an error element and resumes at a sync.
                Ok(Some(ContainerItem::Damaged { len, .. })) => {
                    if let Some(d) = &mut self.dec {
                        d.push_lost(len as usize);
                    }
                }
                Ok(Some(ContainerItem::Trailer(t))) => f.trailer_instructions = Some(t.instructions),
                Ok(None) => break,
                Err(e) => f.error = Some(format!("trace file: {e}")),
            }
        }
    }

    /// The status that ends a pull from the decoder: a trace file's problem takes the place
    /// of `NeedInput`/`End` once everything before it has been decoded.
    fn stop(&mut self, status: StStatus) -> StStatus {
        let Some(f) = &self.file else { return status };
        if let Some(e) = &f.error {
            set_error(e.clone());
            return StStatus::StErrTraceFile;
        }
        if status == StStatus::StEnd && self.dec.is_none() {
            set_error("trace file: the input ended before the header was complete");
            return StStatus::StErrTraceFile;
        }
        if status == StStatus::StEnd && !self.had_error {
            if let Some(n) = f.trailer_instructions.filter(|&n| n != self.delivered + self.lost) {
                set_error(format!(
                    "trace file: the trailer counts {n} instructions, the trace decoded to {}",
                    self.delivered + self.lost
                ));
                return StStatus::StErrTraceFile;
            }
        }
        status
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_error(msg: impl Into<String>) {
    let msg = msg.into().replace('\0', " ");
    LAST_ERROR.with(|e| *e.borrow_mut() = CString::new(msg).unwrap_or_default());
}

/// Run `f`, turning a panic into `ST_ERR_PANIC`.
fn guard(f: impl FnOnce() -> StStatus) -> StStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(s) => s,
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            set_error(format!("internal error (panic): {what}"));
            StStatus::StErrPanic
        }
    }
}

unsafe fn str_arg<'a>(p: *const c_char, what: &str) -> Result<&'a str, StStatus> {
    if p.is_null() {
        set_error(format!("{what} is NULL"));
        return Err(StStatus::StErrNull);
    }
    CStr::from_ptr(p).to_str().map_err(|_| {
        set_error(format!("{what} is not UTF-8"));
        StStatus::StErrUtf8
    })
}

macro_rules! try_st {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(s) => return s,
        }
    };
}

macro_rules! non_null {
    ($p:expr, $what:expr) => {
        if $p.is_null() {
            set_error(concat!($what, " is NULL"));
            return StStatus::StErrNull;
        }
    };
}

/// The message of the last call that failed on this thread ("" if none). Valid until the
/// next failing call on the thread.
#[no_mangle]
pub extern "C" fn st_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Parse a configuration string into `*out` (free with `st_config_free`).
#[no_mangle]
pub unsafe extern "C" fn st_config_parse(text: *const c_char, out: *mut *mut StConfig) -> StStatus {
    guard(|| {
        non_null!(out, "out");
        let text = try_st!(str_arg(text, "configuration"));
        match text.parse::<Config>() {
            Ok(cfg) => {
                *out = Box::into_raw(Box::new(StConfig { cfg }));
                StStatus::StOk
            }
            Err(e) => {
                set_error(format!("bad configuration '{text}': {e}"));
                StStatus::StErrConfig
            }
        }
    })
}

/// Write the canonical form of the configuration, NUL-terminated, into `buf` (at most
/// `len` bytes); `*needed` (if not NULL) gets the length it needs, NUL included.
#[no_mangle]
pub unsafe extern "C" fn st_config_canonical(cfg: *const StConfig, buf: *mut c_char, len: usize, needed: *mut usize) -> StStatus {
    guard(|| {
        non_null!(cfg, "config");
        let s = (*cfg).cfg.to_string();
        if !needed.is_null() {
            *needed = s.len() + 1;
        }
        if !buf.is_null() && len > 0 {
            let n = s.len().min(len - 1);
            std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, buf, n);
            *buf.add(n) = 0;
        }
        StStatus::StOk
    })
}

#[no_mangle]
pub unsafe extern "C" fn st_config_free(cfg: *mut StConfig) {
    if !cfg.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(cfg))));
    }
}

/// An empty image into `*out` (free with `st_image_free`).
#[no_mangle]
pub unsafe extern "C" fn st_image_new(out: *mut *mut StImage) -> StStatus {
    guard(|| {
        non_null!(out, "out");
        *out = Box::into_raw(Box::new(StImage { image: Arc::new(SectionImage::new()) }));
        StStatus::StOk
    })
}

/// Map `len` bytes (copied) at `address` as section `name` (may be NULL). Overlapping
/// an existing section is an error.
#[no_mangle]
pub unsafe extern "C" fn st_image_add_section(
    image: *mut StImage,
    name: *const c_char,
    address: u32,
    bytes: *const u8,
    len: usize,
) -> StStatus {
    guard(|| {
        non_null!(image, "image");
        if len > 0 {
            non_null!(bytes, "bytes");
        }
        let name = if name.is_null() { "section" } else { try_st!(str_arg(name, "name")) };
        let data = if len == 0 { Vec::new() } else { std::slice::from_raw_parts(bytes, len).to_vec() };
        match Arc::make_mut(&mut (*image).image).add_section(name, address, data) {
            Ok(()) => StStatus::StOk,
            Err(e) => {
                set_error(e.to_string());
                StStatus::StErrImage
            }
        }
    })
}

/// Load the ELF file at `path` and map its loadable segments (a program, a ROM, ...).
#[no_mangle]
pub unsafe extern "C" fn st_image_add_elf(image: *mut StImage, path: *const c_char) -> StStatus {
    guard(|| {
        non_null!(image, "image");
        let path = try_st!(str_arg(path, "path"));
        match Arc::make_mut(&mut (*image).image).add_elf_file(path) {
            Ok(()) => StStatus::StOk,
            Err(e) => {
                set_error(e.to_string());
                StStatus::StErrImage
            }
        }
    })
}

/// The symbol covering `address` (from the ELF files added): its name, NUL-terminated,
/// into `buf` (at most `len` bytes), and `*offset` (if not NULL) the offset into it.
/// `ST_END` if no symbol covers the address.
#[no_mangle]
pub unsafe extern "C" fn st_image_symbol(
    image: *const StImage,
    address: u32,
    buf: *mut c_char,
    len: usize,
    offset: *mut u32,
) -> StStatus {
    guard(|| {
        non_null!(image, "image");
        let sym = match (*image).image.symbol_at(address & !1) {
            Some(sym) => sym,
            None => return StStatus::StEnd,
        };
        if !offset.is_null() {
            *offset = (address & !1) - sym.addr;
        }
        if !buf.is_null() && len > 0 {
            let n = sym.name.len().min(len - 1);
            std::ptr::copy_nonoverlapping(sym.name.as_ptr() as *const c_char, buf, n);
            *buf.add(n) = 0;
        }
        StStatus::StOk
    })
}

#[no_mangle]
pub unsafe extern "C" fn st_image_free(image: *mut StImage) {
    if !image.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(image))));
    }
}

/// A decoder for a trace of configuration `cfg` over `image`, into `*out` (free with
/// `st_decoder_free`). The decoder keeps its own reference to the image's current
/// contents: both handles may be freed in any order.
#[no_mangle]
pub unsafe extern "C" fn st_decoder_new(cfg: *const StConfig, image: *const StImage, out: *mut *mut StDecoder) -> StStatus {
    guard(|| {
        non_null!(cfg, "config");
        non_null!(image, "image");
        non_null!(out, "out");
        *out = Box::into_raw(Box::new(StDecoder::with(Some((*cfg).cfg), &(*image).image)));
        StStatus::StOk
    })
}

/// A decoder for a **trace file** (what `streamtrace run --trace-out` and `encode` write:
/// the container of docs/trace-format.md section 12) over `image`, into `*out`. The
/// configuration comes from the file's header (`st_decoder_config` once it is read);
/// damaged blocks (CRC-32C) become Error elements followed by a resync, as a gap in a bare
/// stream does; a file that is truncated, not a trace file, has bytes after its trailer or
/// decodes to another count than its trailer's ends with `ST_ERR_TRACE_FILE` after
/// everything before the problem. The program identity in the header is not checked
/// against the image (the image may be several files).
#[no_mangle]
pub unsafe extern "C" fn st_decoder_new_from_file(image: *const StImage, out: *mut *mut StDecoder) -> StStatus {
    guard(|| {
        non_null!(image, "image");
        non_null!(out, "out");
        *out = Box::into_raw(Box::new(StDecoder::with(None, &(*image).image)));
        StStatus::StOk
    })
}

/// The canonical form of the decoder's configuration (a trace file's: from its header),
/// NUL-terminated, into `buf` (at most `len` bytes); `*needed` (if not NULL) gets the
/// length it needs. `ST_NEED_INPUT` while a trace file's header has not been pushed whole.
#[no_mangle]
pub unsafe extern "C" fn st_decoder_config(dec: *const StDecoder, buf: *mut c_char, len: usize, needed: *mut usize) -> StStatus {
    guard(|| {
        non_null!(dec, "decoder");
        let Some(cfg) = (*dec).config else { return StStatus::StNeedInput };
        let c = StConfig { cfg };
        st_config_canonical(&c, buf, len, needed)
    })
}

/// Append `len` trace bytes (copied; any chunk size, 1 included).
#[no_mangle]
pub unsafe extern "C" fn st_decoder_push(dec: *mut StDecoder, bytes: *const u8, len: usize) -> StStatus {
    guard(|| {
        non_null!(dec, "decoder");
        let d = &mut *dec;
        if d.finished {
            set_error("st_decoder_push after st_decoder_finish");
            return StStatus::StErrState;
        }
        if len > 0 {
            non_null!(bytes, "bytes");
            let bytes = std::slice::from_raw_parts(bytes, len);
            match &mut d.file {
                Some(f) => {
                    f.reader.push(bytes);
                    d.pump();
                }
                None => d.dec.as_mut().expect("a bare-stream decoder has its decoder").push(bytes),
            }
        }
        StStatus::StOk
    })
}

/// No more input: the rest of the buffered trace is decoded to its end.
#[no_mangle]
pub unsafe extern "C" fn st_decoder_finish(dec: *mut StDecoder) -> StStatus {
    guard(|| {
        non_null!(dec, "decoder");
        let d = &mut *dec;
        d.finished = true;
        if let Some(f) = &mut d.file {
            f.reader.finish();
            d.pump();
        }
        if let Some(dd) = &mut d.dec {
            dd.finish();
        }
        StStatus::StOk
    })
}

impl StDecoder {
    /// An Instructions element for the spilled addresses (moved to `element_addrs`).
    fn instructions(&mut self, bit_offset: u64) -> StElement {
        std::mem::swap(&mut self.element_addrs, &mut self.spill);
        self.spill.clear();
        self.delivered += self.element_addrs.len() as u64;
        let first = self.element_addrs[0];
        StElement {
            address: first & !1,
            thumb: first & 1,
            length: self.element_addrs.len() as u32,
            ..StElement::new(StElementKind::StElemInstructions, bit_offset)
        }
    }

    /// The element of a step that is not a stream, or the status that ends the pull.
    fn element_of(&mut self, step: Step) -> Result<Option<StElement>, StStatus> {
        use StElementKind::*;
        Ok(Some(match step {
            Step::Element(TraceElement::Exception { offset }) => StElement::new(StElemException, offset),
            Step::Element(TraceElement::Sync { offset }) => StElement::new(StElemSync, offset),
            Step::Element(TraceElement::Overflow { lost, offset }) => {
                self.lost += lost as u64;
                StElement { lost, ..StElement::new(StElemOverflow, offset) }
            }
            Step::Element(TraceElement::End { offset }) => StElement::new(StElemEnd, offset),
            Step::Error(e) => {
                self.had_error = true;
                self.error_message = CString::new(e.to_string().replace('\0', " ")).unwrap_or_default();
                StElement::new(StElemError, e.offset())
            }
            Step::Resynced { bit } => StElement::new(StElemResync, bit),
            Step::NeedInput => return Err(self.stop(StStatus::StNeedInput)),
            Step::Finished => return Err(self.stop(StStatus::StEnd)),
            Step::Element(TraceElement::Stream { .. } | TraceElement::Record(_)) | Step::Progress => return Ok(None),
        }))
    }
}

/// The next element into `*element`: `ST_OK` with an element, `ST_NEED_INPUT`, or `ST_END`.
#[no_mangle]
pub unsafe extern "C" fn st_decoder_next(dec: *mut StDecoder, element: *mut StElement) -> StStatus {
    guard(|| {
        non_null!(dec, "decoder");
        non_null!(element, "element");
        let d = &mut *dec;
        loop {
            // Addresses decoded earlier come first.
            if !d.spill.is_empty() {
                *element = d.instructions(0);
                return StStatus::StOk;
            }
            let step = match d.queued.take() {
                Some(s) => s,
                None => match &mut d.dec {
                    Some(dd) => dd.next(&mut d.spill),
                    None if d.finished => Step::Finished,
                    None => Step::NeedInput,
                },
            };
            if let Step::Element(TraceElement::Stream { sa, offset, .. }) = step {
                let mut el = d.instructions(offset);
                el.address = sa & !1;
                *element = el;
                return StStatus::StOk;
            }
            if !d.spill.is_empty() {
                // pft: instructions decoded before the escape (or the pause) come first.
                d.queued = Some(step);
                continue;
            }
            match d.element_of(step) {
                Ok(Some(el)) => {
                    *element = el;
                    return StStatus::StOk;
                }
                Ok(None) => {}
                Err(s) => return s,
            }
        }
    })
}

/// The addresses of the last Instructions element returned by `st_decoder_next`, in
/// interworking form (bit 0 set: Thumb), valid until the next call on the decoder.
#[no_mangle]
pub unsafe extern "C" fn st_decoder_element_addresses(dec: *const StDecoder, addrs: *mut *const u32, count: *mut usize) -> StStatus {
    guard(|| {
        non_null!(dec, "decoder");
        non_null!(addrs, "addrs");
        non_null!(count, "count");
        *addrs = (*dec).element_addrs.as_ptr();
        *count = (*dec).element_addrs.len();
        StStatus::StOk
    })
}

/// The message of the last Error element (valid until the next call on the decoder).
#[no_mangle]
pub unsafe extern "C" fn st_decoder_error_message(dec: *const StDecoder) -> *const c_char {
    if dec.is_null() {
        // Not a c"" literal: the Debian cbindgen (0.24) cannot parse those.
        #[allow(clippy::manual_c_str_literals)]
        return b"decoder is NULL\0".as_ptr() as *const c_char;
    }
    (*dec).error_message.as_ptr()
}

/// Fast path: fill `buf` with up to `cap` instruction addresses (interworking form) and
/// set `*count`. Returns `ST_OK` (buffer full), `ST_NEED_INPUT`, `ST_END`, or
/// `ST_ELEMENT_PENDING` (an element that is not a stream is next: get it with
/// `st_decoder_next`); `*count` may be non-zero with any of them.
#[no_mangle]
pub unsafe extern "C" fn st_decoder_read_addresses(dec: *mut StDecoder, buf: *mut u32, cap: usize, count: *mut usize) -> StStatus {
    guard(|| {
        non_null!(dec, "decoder");
        non_null!(count, "count");
        *count = 0;
        if cap == 0 {
            return StStatus::StOk;
        }
        non_null!(buf, "buf");
        let d = &mut *dec;
        let out = std::slice::from_raw_parts_mut(buf, cap);
        let mut n = 0;
        let mut stop_status = None;
        loop {
            if !d.spill.is_empty() {
                let k = d.spill.len().min(cap - n);
                out[n..n + k].copy_from_slice(&d.spill[..k]);
                d.spill.drain(..k);
                n += k;
                d.delivered += k as u64;
            }
            *count = n;
            if n == cap {
                return StStatus::StOk;
            }
            if d.queued.is_some() {
                return StStatus::StElementPending;
            }
            if let Some(s) = stop_status {
                return s;
            }
            let want = cap - n;
            let mut queued = None;
            let Some(dd) = &mut d.dec else {
                stop_status = Some(d.stop(if d.finished { StStatus::StEnd } else { StStatus::StNeedInput }));
                continue;
            };
            let stop = dd.run(&mut d.spill, |step, spill| match step {
                Step::Element(TraceElement::Stream { .. } | TraceElement::Record(_)) | Step::Progress => {
                    if spill.len() >= want {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                }
                other => {
                    queued = Some(other);
                    ControlFlow::Break(())
                }
            });
            d.queued = queued;
            stop_status = match stop {
                Step::NeedInput => Some(d.stop(StStatus::StNeedInput)),
                Step::Finished => Some(d.stop(StStatus::StEnd)),
                _ => None,
            };
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn st_decoder_free(dec: *mut StDecoder) {
    if !dec.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(dec))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let s = guard(|| panic!("boom"));
        std::panic::set_hook(prev);
        assert_eq!(s, StStatus::StErrPanic);
        let msg = unsafe { CStr::from_ptr(st_last_error()) }.to_str().unwrap().to_string();
        assert!(msg.contains("panic") && msg.contains("boom"), "{msg}");
    }

    /// Decode `file` pushed in chunks of `chunk` bytes through the C calls: the addresses and
    /// the final status.
    unsafe fn decode_file(image: &StImage, file: &[u8], chunk: usize) -> (Vec<u32>, StStatus) {
        let mut dec = std::ptr::null_mut();
        assert_eq!(st_decoder_new_from_file(image, &mut dec), StStatus::StOk);
        let mut chunks = file.chunks(chunk);
        let mut addrs = Vec::new();
        let mut buf = [0u32; 100];
        let status = loop {
            let mut n = 0;
            let s = st_decoder_read_addresses(dec, buf.as_mut_ptr(), buf.len(), &mut n);
            addrs.extend_from_slice(&buf[..n]);
            match s {
                StStatus::StOk => {}
                StStatus::StNeedInput => match chunks.next() {
                    Some(c) => assert_eq!(st_decoder_push(dec, c.as_ptr(), c.len()), StStatus::StOk),
                    None => assert_eq!(st_decoder_finish(dec), StStatus::StOk),
                },
                StStatus::StElementPending => {
                    let mut el = StElement::new(StElementKind::StElemEnd, 0);
                    assert_eq!(st_decoder_next(dec, &mut el), StStatus::StOk);
                }
                other => break other,
            }
        };
        if status == StStatus::StEnd {
            let mut name = [0 as c_char; 64];
            assert_eq!(st_decoder_config(dec, name.as_mut_ptr(), name.len(), std::ptr::null_mut()), StStatus::StOk);
            assert_eq!(CStr::from_ptr(name.as_ptr()).to_str().unwrap(), "pft");
        }
        st_decoder_free(dec);
        (addrs, status)
    }

    #[test]
    fn trace_files_decode_and_their_trailer_count_is_checked() {
        use streamtrace_model::container::{to_container, ContainerHeader, ProgramIdentity};
        let run = streamtrace_sw_decoder::synthetic::generate(&streamtrace_sw_decoder::synthetic::SyntheticSpec::new(3, 20_000)).unwrap();
        let mut sections = SectionImage::new();
        for (i, seg) in run.image.segments().iter().enumerate() {
            sections.add_section(&format!("s{i}"), seg.base(), seg.bytes().to_vec()).unwrap();
        }
        let image = StImage { image: Arc::new(sections) };
        let cfg: Config = "pft".parse().unwrap();
        let (trace, _) = streamtrace_model::encode_events(&cfg, &run.events).unwrap();
        let header = ContainerHeader::new(&cfg, ProgramIdentity::None);
        let want: Vec<u32> = run.events.iter().map(|e| e.pc | e.thumb as u32).collect();
        let n = run.events.len() as u64;
        for chunk in [1, 7, 4096] {
            let (got, status) = unsafe { decode_file(&image, &to_container(&header, &trace.bytes, n), chunk) };
            assert_eq!(status, StStatus::StEnd, "chunk {chunk}");
            assert!(got == want, "chunk {chunk}: the addresses differ");
        }
        // The same file with a trailer that counts one more instruction (its CRC is right).
        let (got, status) = unsafe { decode_file(&image, &to_container(&header, &trace.bytes, n + 1), 4096) };
        assert_eq!(status, StStatus::StErrTraceFile);
        assert!(got == want, "everything decoded comes first");
        let msg = unsafe { CStr::from_ptr(st_last_error()) }.to_str().unwrap().to_string();
        assert!(msg.contains(&format!("the trailer counts {} instructions, the trace decoded to {n}", n + 1)), "{msg}");
        // A bare bit stream is not a trace file.
        let (_, status) = unsafe { decode_file(&image, &trace.bytes, 4096) };
        assert_eq!(status, StStatus::StErrTraceFile);
    }

    #[test]
    fn null_handles_are_errors_not_crashes() {
        unsafe {
            let mut el = StElement::new(StElementKind::StElemEnd, 0);
            assert_eq!(st_decoder_next(std::ptr::null_mut(), &mut el), StStatus::StErrNull);
            assert_eq!(st_decoder_push(std::ptr::null_mut(), std::ptr::null(), 0), StStatus::StErrNull);
            let mut n = 0;
            assert_eq!(st_decoder_read_addresses(std::ptr::null_mut(), std::ptr::null_mut(), 4, &mut n), StStatus::StErrNull);
            assert_eq!(st_image_add_elf(std::ptr::null_mut(), std::ptr::null()), StStatus::StErrNull);
        }
    }
}
