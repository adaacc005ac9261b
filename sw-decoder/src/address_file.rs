//! Decoded instruction addresses into a file, as `decode -o` and `run --pc-trace` write
//! them: text lines (`%08x A` / `%08x T`, or `%08x`) or 32-bit little-endian words. A decode
//! produces hundreds of millions of addresses, so the lines are formatted straight into
//! large buffers and a thread of its own writes each full buffer while the decoder fills
//! the next one (on a machine with two cores, decoding and the file system's copy overlap).

use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use streamtrace_model::events_file::{push_address_lines, push_address_words};

use crate::AddressSink;

/// The form of an address file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressForm {
    /// `%08x A` or `%08x T`: the address and the state (ARM or Thumb).
    Annotated,
    /// `%08x`: the address alone.
    Plain,
    /// Each address as a 32-bit little-endian word in interworking form (bit 0 set for
    /// Thumb).
    Binary,
}

/// Bytes gathered before a buffer goes to the writing thread.
const BUFFER_BYTES: usize = 1 << 20;
/// Buffers in flight: one being written, one queued, one being filled.
const BUFFERS: usize = 3;

/// Writes byte buffers on a thread of its own; empty buffers come back for reuse. The first
/// write error stops the thread and is returned by the next [`BackgroundWriter::send`] or
/// by [`BackgroundWriter::finish`].
pub struct BackgroundWriter {
    full: Option<SyncSender<Vec<u8>>>,
    empty: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl BackgroundWriter {
    pub fn new(mut out: Box<dyn Write + Send>) -> Self {
        let (full, full_rx) = sync_channel::<Vec<u8>>(BUFFERS - 1);
        let (empty_tx, empty) = sync_channel::<Vec<u8>>(BUFFERS);
        let thread = std::thread::spawn(move || -> io::Result<()> {
            for mut buf in full_rx {
                out.write_all(&buf)?;
                buf.clear();
                // The producer may have finished: a buffer nobody takes back is dropped.
                let _ = empty_tx.try_send(buf);
            }
            out.flush()
        });
        BackgroundWriter { full: Some(full), empty, thread: Some(thread) }
    }

    /// An empty buffer: one the thread has written, or a new one.
    pub fn buffer(&mut self) -> Vec<u8> {
        self.empty.try_recv().unwrap_or_else(|_| Vec::with_capacity(BUFFER_BYTES + (1 << 16)))
    }

    /// Queue `buf` for writing (blocks while the queue is full).
    pub fn send(&mut self, buf: Vec<u8>) -> io::Result<()> {
        let stopped = match &self.full {
            Some(tx) => tx.send(buf).is_err(),
            None => true,
        };
        if stopped {
            // The thread returned: its error.
            return self.join();
        }
        Ok(())
    }

    fn join(&mut self) -> io::Result<()> {
        self.full = None;
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| Err(io::Error::other("the writing thread panicked"))),
            None => Err(io::Error::other("the writer was stopped by an earlier error")),
        }
    }

    /// Write what is queued, flush, and return the first error.
    pub fn finish(mut self) -> io::Result<()> {
        self.join()
    }
}

/// An [`AddressSink`] that writes an address file in a [`AddressForm`]. The sink interface
/// cannot return an error: the first one is kept for [`AddressFileWriter::finish`], and
/// later addresses are dropped.
pub struct AddressFileWriter {
    form: AddressForm,
    buf: Vec<u8>,
    writer: BackgroundWriter,
    error: Option<io::Error>,
}

impl AddressFileWriter {
    pub fn new(out: Box<dyn Write + Send>, form: AddressForm) -> Self {
        let mut writer = BackgroundWriter::new(out);
        AddressFileWriter { form, buf: writer.buffer(), writer, error: None }
    }

    pub fn form(&self) -> AddressForm {
        self.form
    }

    /// The buffer the next bytes go to, for a caller that writes its own text (one line
    /// per address, followed by [`AddressFileWriter::filled`]).
    pub fn text(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Hand the buffer to the writing thread once it is full enough.
    pub fn filled(&mut self) {
        if self.buf.len() >= BUFFER_BYTES && self.error.is_none() {
            let next = self.writer.buffer();
            let full = std::mem::replace(&mut self.buf, next);
            if let Err(e) = self.writer.send(full) {
                self.error = Some(e);
            }
        }
    }

    /// Write everything and return the first error.
    pub fn finish(mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if !self.buf.is_empty() {
            let last = std::mem::take(&mut self.buf);
            self.writer.send(last)?;
        }
        self.writer.finish()
    }
}

impl AddressSink for AddressFileWriter {
    fn addresses(&mut self, addrs: &[u32]) {
        if self.error.is_some() {
            return;
        }
        for chunk in addrs.chunks(1 << 14) {
            match self.form {
                AddressForm::Binary => push_address_words(&mut self.buf, chunk),
                form => push_address_lines(&mut self.buf, chunk, form == AddressForm::Annotated),
            }
            self.filled();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A `Write` into shared memory, failing after `limit` bytes.
    struct Shared(Arc<Mutex<Vec<u8>>>, usize);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            let mut v = self.0.lock().unwrap();
            if v.len() + b.len() > self.1 {
                return Err(io::Error::other("disk full"));
            }
            v.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_form_is_written_whole_and_in_order() {
        // Enough addresses for several buffers in every form.
        let addrs: Vec<u32> = (0..400_000u32).map(|i| i.wrapping_mul(2_654_435_761) | (i & 1)).collect();
        for form in [AddressForm::Annotated, AddressForm::Plain, AddressForm::Binary] {
            let got = Arc::new(Mutex::new(Vec::new()));
            let mut w = AddressFileWriter::new(Box::new(Shared(got.clone(), usize::MAX)), form);
            for c in addrs.chunks(999) {
                w.addresses(c);
            }
            w.finish().unwrap();
            let mut want = Vec::new();
            match form {
                AddressForm::Binary => push_address_words(&mut want, &addrs),
                f => push_address_lines(&mut want, &addrs, f == AddressForm::Annotated),
            }
            assert!(*got.lock().unwrap() == want, "{form:?}");
        }
    }

    #[test]
    fn a_write_error_is_returned_by_finish() {
        let addrs = vec![0x8000u32; 1_000_000];
        let got = Arc::new(Mutex::new(Vec::new()));
        let mut w = AddressFileWriter::new(Box::new(Shared(got, 3 << 20)), AddressForm::Annotated);
        w.addresses(&addrs);
        w.addresses(&addrs);
        let e = w.finish().unwrap_err();
        assert!(e.to_string().contains("disk full"), "{e}");
    }
}
