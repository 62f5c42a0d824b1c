//! Reads the IPC [file format]: the magic, the same encapsulated messages as a stream,
//! then a footer that lists where each dictionary and record batch message lies.
//!
//! The decoder never asks for the whole file. It is opened from the file's last 10 bytes
//! and its footer, then says which byte ranges batch `i` needs (the schema message and
//! the dictionaries, the first time, and the batch's block), and decodes them when they
//! are handed over. A caller with the whole file in memory hands over slices; one with a
//! `Blob` reads only those ranges. The footer is parsed by arrow-ipc's generated
//! flatbuffers; each block is framed by the stream reader's `Framer` and decoded by its
//! `MessageDecoder`, so a file's messages are read exactly as a stream's are.
//!
//! arrow-ipc's `FileDecoder` takes each block as a `Buffer` already in memory, which in
//! wasm means a copy from JavaScript into a buffer and, for blocks whose body is not
//! aligned, a second one. Here each block is copied once, into the framer's buffers.
//!
//! [file format]: https://arrow.apache.org/docs/format/Columnar.html#ipc-file-format

use std::mem::MaybeUninit;
use std::ops::Range;

use arrow_array::RecordBatch;
use arrow_ipc::{Footer, MessageHeader, MetadataVersion};
use arrow_schema::{Schema, SchemaRef};
use flatbuffers::{ForwardsUOffset, InvalidFlatbuffer, Verifiable, Verifier, VerifierOptions};

use super::framing::{one_line, Framer, RawMessage};
use super::message::{read_schema, MessageDecoder, PushLimits};
use crate::ipc::error::{QuiverError, Result};
use crate::ipc::limits::ReadLimits;
use crate::ipc::stats::ReadStats;
use crate::ipc::BatchMetadata;

/// The 6 bytes a file starts and ends with.
pub const MAGIC: &[u8; 6] = b"ARROW1";

/// The bytes after the footer: its length (int32) and the magic.
pub const TAIL_BYTES: u64 = 10;

/// The magic and its padding, before the schema message.
const HEAD_BYTES: u64 = 8;

/// Whether `bytes` start like an IPC file rather than a stream.
pub fn is_file(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Where a message lies in the file, as the footer declares it.
#[derive(Clone, Copy, Debug)]
struct Block {
    offset: u64,
    /// The prefix and the metadata, padded.
    metadata: u64,
    body: u64,
}

impl Block {
    fn range(&self) -> Range<u64> {
        self.offset..self.offset + self.metadata + self.body
    }
}

/// Random access to the batches of one IPC file.
pub struct FileDecoder {
    schema: SchemaRef,
    dictionaries: Vec<Block>,
    batches: Vec<Block>,
    /// Where the footer starts: the schema message and every block end before it.
    footer_start: u64,
    file_len: u64,
    limits: ReadLimits,
    messages: MessageDecoder,
    /// Whether the schema message and the dictionaries have been read.
    prelude_read: bool,
    failure: Option<String>,
    stats: ReadStats,
}

impl FileDecoder {
    /// Where the footer lies in a file of `file_len` bytes, from the file's last
    /// [`TAIL_BYTES`] bytes.
    pub fn footer_range(tail: &[u8], file_len: u64, limits: &ReadLimits) -> Result<Range<u64>> {
        let too_short = || {
            QuiverError::invalid(format!(
                "expected an IPC file of at least {} bytes (its magic, and the footer's \
                 length and magic), found {file_len}: the file is truncated",
                HEAD_BYTES + TAIL_BYTES
            ))
        };
        let Some((len, magic)) = tail
            .split_first_chunk::<4>()
            .filter(|_| tail.len() as u64 == TAIL_BYTES)
        else {
            return Err(too_short());
        };
        if file_len < HEAD_BYTES + TAIL_BYTES {
            return Err(too_short());
        }
        if magic != MAGIC {
            return Err(QuiverError::invalid(format!(
                "expected an IPC file to end with the magic ARROW1, found {}: the file is \
                 truncated or not an IPC file",
                describe_bytes(magic)
            )));
        }
        let len = i32::from_le_bytes(*len);
        let room = file_len - HEAD_BYTES - TAIL_BYTES;
        let len = u64::try_from(len)
            .ok()
            .filter(|&len| len <= room)
            .ok_or_else(|| {
                QuiverError::invalid(format!(
                    "footer length is {len} bytes, but the file has {room} bytes between its \
                     magic numbers: the footer is truncated"
                ))
            })?;
        limits.check_message_size("file footer", len)?;
        let end = file_len - TAIL_BYTES;
        Ok(end - len..end)
    }

    /// A decoder for a file of `file_len` bytes, from its footer (the bytes of
    /// [`FileDecoder::footer_range`]).
    pub fn try_new(footer: &[u8], file_len: u64, limits: ReadLimits) -> Result<Self> {
        let footer_start = file_len.saturating_sub(TAIL_BYTES + footer.len() as u64);
        let fb = verified_footer(footer).map_err(|e| {
            QuiverError::invalid(format!(
                "file footer is not a valid flatbuffer: {}",
                one_line(&e.to_string())
            ))
        })?;
        let schema = fb
            .schema()
            .ok_or_else(|| QuiverError::invalid("file footer has no schema"))?;
        let dictionaries = check_blocks("dictionary", fb.dictionaries(), footer_start)?;
        let batches = check_blocks("record batch", fb.recordBatches(), footer_start)?;
        check_total(&dictionaries, &batches, footer_start)?;
        let schema = read_schema(schema)?;
        Ok(FileDecoder {
            messages: MessageDecoder::with_schema(schema.clone()),
            schema,
            dictionaries,
            batches,
            footer_start,
            file_len,
            limits,
            prelude_read: false,
            failure: None,
            stats: ReadStats {
                bytes_pushed: TAIL_BYTES + footer.len() as u64,
                bytes_copied: TAIL_BYTES + footer.len() as u64,
                ..ReadStats::default()
            },
        })
    }

    /// The schema, as the footer declares it.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    pub fn num_batches(&self) -> usize {
        self.batches.len()
    }

    /// What the decoder has read: `bytes_pushed` counts every byte of the file handed to
    /// it, footer included.
    pub fn stats(&self) -> &ReadStats {
        &self.stats
    }

    /// The ranges of the file that batch `index` needs: the first time, the start of the
    /// file up to the first block (its magic and schema message) and the dictionary
    /// blocks; then the batch's block. Not in order of their starts: a dictionary's block
    /// may lie after the batch's (a delta written after it).
    pub fn ranges(&self, index: usize) -> Result<Vec<Range<u64>>> {
        let batch = self.block(index)?;
        let mut ranges = Vec::new();
        if !self.prelude_read {
            ranges.push(self.head());
            ranges.extend(self.dictionaries.iter().map(Block::range));
        }
        ranges.push(batch.range());
        Ok(ranges)
    }

    /// The start of the file up to its first block: the magic and the schema message.
    fn head(&self) -> Range<u64> {
        let first = self.dictionaries.iter().chain(&self.batches);
        let end = first.map(|b| b.offset).min().unwrap_or(self.footer_start);
        0..end.max(HEAD_BYTES)
    }

    /// Decodes batch `index` from the bytes of [`FileDecoder::ranges`], which must lie
    /// inside the ranges `given` (in order of their starts): `copy(offset, destination)` fills `destination` with the
    /// file's bytes from `offset` on, and is only asked for bytes inside `given`. The
    /// bytes of `given` count as read.
    ///
    /// An error in the schema message or a dictionary fails every later call; one in a
    /// record batch's block fails that batch only.
    ///
    /// # Safety
    /// `copy` must initialize every byte of each destination it is given.
    pub unsafe fn read_batch(
        &mut self,
        index: usize,
        given: &[Range<u64>],
        mut copy: impl FnMut(u64, &mut [MaybeUninit<u8>]),
    ) -> Result<(RecordBatch, BatchMetadata)> {
        if let Some(message) = &self.failure {
            return Err(QuiverError::Usage(format!(
                "the file failed earlier and cannot be read: {message}"
            )));
        }
        let ranges = self.ranges(index)?;
        if let Some(missing) = ranges.iter().find(|r| !covered(given, r)) {
            return Err(QuiverError::Usage(format!(
                "batch {index} needs bytes {}..{} of the file, which were not given",
                missing.start, missing.end
            )));
        }
        self.stats.bytes_pushed += given.iter().map(|r| r.end - r.start).sum::<u64>();
        if !self.prelude_read {
            // SAFETY: passed on from the caller.
            if let Err(error) = unsafe { self.read_prelude(&self.head(), &mut copy) } {
                self.failure = Some(error.to_string());
                return Err(error);
            }
            self.prelude_read = true;
        }
        let block = self.batches[index];
        let what = format!("record batch block {index}");
        // SAFETY: passed on from the caller.
        unsafe { self.read_block(&what, block, MessageHeader::RecordBatch, &mut copy)? };
        self.messages
            .next_batch()
            .ok_or_else(|| QuiverError::Internal(format!("{what} decoded to no batch")))
    }

    /// Opens a file that is all in `bytes`.
    pub fn from_bytes(bytes: &[u8], limits: ReadLimits) -> Result<Self> {
        let len = bytes.len() as u64;
        let tail = &bytes[bytes.len().saturating_sub(TAIL_BYTES as usize)..];
        let footer = Self::footer_range(tail, len, &limits)?;
        Self::try_new(
            &bytes[footer.start as usize..footer.end as usize],
            len,
            limits,
        )
    }

    /// Decodes batch `index` of the file that is all in `bytes`.
    pub fn read_batch_from(
        &mut self,
        index: usize,
        bytes: &[u8],
    ) -> Result<(RecordBatch, BatchMetadata)> {
        if bytes.len() as u64 != self.file_len {
            return Err(QuiverError::Usage(format!(
                "expected the file's {} bytes, found {}",
                self.file_len,
                bytes.len()
            )));
        }
        let whole = 0..self.file_len;
        let whole = std::slice::from_ref(&whole);
        // SAFETY: the closure initializes every byte of each destination; the decoder asks
        // only for bytes inside the file (`given`).
        unsafe {
            self.read_batch(index, whole, |at, dst| {
                let src = &bytes[at as usize..at as usize + dst.len()];
                for (d, s) in dst.iter_mut().zip(src) {
                    d.write(*s);
                }
            })
        }
    }

    /// Checks the magic and the schema message at the start of the file against the
    /// footer, then reads every dictionary.
    unsafe fn read_prelude(&mut self, head: &Range<u64>, copy: &mut CopyFn<'_>) -> Result<()> {
        let mut magic = [MaybeUninit::new(0u8); HEAD_BYTES as usize];
        copy(0, &mut magic);
        self.stats.bytes_copied += HEAD_BYTES;
        // SAFETY: `copy` initialized all 8 bytes.
        let magic = magic.map(|b| unsafe { b.assume_init() });
        if !is_file(&magic) {
            return Err(QuiverError::invalid(format!(
                "expected an IPC file to start with the magic ARROW1, found {}",
                describe_bytes(&magic[..MAGIC.len()])
            )));
        }
        // Readers go by the footer's schema: pyarrow and arrow-rs never read the one at the
        // start, and polars 2.1 writes that one without its prefix. A schema message that
        // frames there must agree with the footer, though.
        let mut schema = None;
        let mut read = |message: RawMessage<'_>, _| {
            // SAFETY: the framer verified these bytes.
            let fb = unsafe { arrow_ipc::root_as_message_unchecked(message.metadata) };
            schema = fb.header_as_schema().map(read_schema).transpose()?;
            Ok(())
        };
        let copied = &mut self.stats.bytes_copied;
        let schema_message = HEAD_BYTES..head.end;
        // SAFETY: passed on from the caller.
        let framed = unsafe {
            frame(
                "the schema message",
                self.limits,
                copied,
                schema_message,
                copy,
                &mut read,
            )
        };
        if let (Ok(()), Some(schema)) = (framed, schema) {
            check_same_schema(&self.schema, &schema)?;
        }
        for (index, block) in self.dictionaries.clone().into_iter().enumerate() {
            let what = format!("dictionary block {index}");
            // SAFETY: passed on from the caller.
            unsafe { self.read_block(&what, block, MessageHeader::DictionaryBatch, copy)? };
        }
        Ok(())
    }

    /// Frames the message of `block`, checks that it is of kind `want` and fills the
    /// block exactly, and decodes it.
    unsafe fn read_block(
        &mut self,
        what: &str,
        block: Block,
        want: MessageHeader,
        copy: &mut CopyFn<'_>,
    ) -> Result<()> {
        let declared = |found: String| {
            QuiverError::invalid(format!(
                "{what} declares {} bytes of metadata and a {}-byte body, but its message {found}",
                block.metadata, block.body
            ))
        };
        let (messages, limits) = (&mut self.messages, self.limits);
        let mut stats = self.stats;
        let mut decode = |message: RawMessage<'_>, read: u64| {
            let body = message.body.len() as u64;
            if read - body != block.metadata || body != block.body {
                return Err(declared(format!("has {} and {body}", read - body)));
            }
            // SAFETY: the framer verified these bytes.
            let fb = unsafe { arrow_ipc::root_as_message_unchecked(message.metadata) };
            if fb.header_type() != want {
                return Err(QuiverError::invalid(format!(
                    "expected {what} to hold a {} message, found {}",
                    kind_name(want),
                    kind_name(fb.header_type())
                )));
            }
            if let Some(dictionary) = fb.header_as_dictionary_batch() {
                if !dictionary.isDelta() && messages.has_dictionary(dictionary.id()) {
                    return Err(QuiverError::invalid(format!(
                        "{what} replaces dictionary {}: an IPC file may only add to a \
                         dictionary, with deltas",
                        dictionary.id()
                    )));
                }
            }
            let mut limits = PushLimits { limits, left: None };
            messages.decode(message, &mut limits, &mut stats)
        };
        let mut copied = 0;
        // SAFETY: passed on from the caller.
        let outcome = unsafe { frame(what, limits, &mut copied, block.range(), copy, &mut decode) };
        self.stats = stats;
        self.stats.bytes_copied += copied;
        outcome.map_err(|e| match e {
            QuiverError::Truncated { what, needed, got } => declared(format!(
                "needs more: {what} needs {needed} bytes, got {got}"
            )),
            other => other,
        })
    }

    fn block(&self, index: usize) -> Result<Block> {
        self.batches.get(index).copied().ok_or_else(|| {
            QuiverError::Usage(format!(
                "batch {index} does not exist: the file has {} batches",
                self.batches.len()
            ))
        })
    }
}

/// Fills a destination with the file's bytes from an offset on.
type CopyFn<'a> = dyn FnMut(u64, &mut [MaybeUninit<u8>]) + 'a;

/// What `frame` hands a whole message to, with the bytes it took, prefix included.
type DecodeFn<'a> = dyn FnMut(RawMessage<'_>, u64) -> Result<()> + 'a;

/// Frames the one message that starts at `range.start`, copying no byte past
/// `range.end`, and hands it to `decode` with the bytes it took, prefix included.
///
/// `copy` and `decode` are trait objects, so that the wasm build holds one copy of this
/// loop, not one per caller (3.5 KiB of code before wasm-opt).
unsafe fn frame(
    what: &str,
    limits: ReadLimits,
    copied: &mut u64,
    range: Range<u64>,
    copy: &mut CopyFn<'_>,
    decode: &mut DecodeFn<'_>,
) -> Result<()> {
    // A message larger than its range cannot fit it: bounding the framer by the range
    // refuses one before its buffers are allocated at the sizes it declares.
    let room = range.end - range.start;
    let mut framer = Framer::new(ReadLimits {
        max_message_bytes: limits.max_message_bytes.min(room),
        ..limits
    });
    let within_range = |error| match error {
        QuiverError::LimitExceeded { what, found, .. } if found <= limits.max_message_bytes => {
            QuiverError::Truncated {
                what,
                needed: usize::try_from(found).unwrap_or(usize::MAX),
                got: usize::try_from(room).unwrap_or(usize::MAX),
            }
        }
        other => other,
    };
    let mut at = range.start;
    loop {
        let destination = framer.destination();
        if destination.is_empty() {
            return Err(QuiverError::invalid(format!(
                "expected {what} to hold a message, found an end-of-stream marker"
            )));
        }
        let n = (destination.len() as u64).min(range.end - at) as usize;
        if n == 0 {
            let (what, needed, got) = framer.incomplete().unwrap_or(("message", 0, 0));
            return Err(QuiverError::Truncated { what, needed, got });
        }
        copy(at, &mut destination[..n]);
        at += n as u64;
        *copied += n as u64;
        // SAFETY: `copy` initialized the `n` bytes, and n <= destination.len().
        if let Some(message) = unsafe { framer.advance(n) }.map_err(within_range)? {
            return decode(message, at - range.start);
        }
    }
}

/// The footer's flatbuffer, verified as arrow-ipc's `root_as_footer` verifies it, field by
/// field, with its default options. `root_as_footer` inlines a copy of the schema's
/// verifier (6.4 KiB of code before wasm-opt); here the schema goes through the verifier
/// that schema messages already go through.
fn verified_footer(footer: &[u8]) -> std::result::Result<Footer<'_>, InvalidFlatbuffer> {
    let options = VerifierOptions::default();
    let mut verifier = Verifier::new(&options, footer);
    ForwardsUOffset::<FooterTable>::run_verifier(&mut verifier, 0)?;
    // SAFETY: verified above.
    Ok(unsafe { arrow_ipc::root_as_footer_unchecked(footer) })
}

/// The verifier of the `Footer` table.
struct FooterTable;

impl Verifiable for FooterTable {
    fn run_verifier(v: &mut Verifier, pos: usize) -> std::result::Result<(), InvalidFlatbuffer> {
        type Blocks<'a> = ForwardsUOffset<flatbuffers::Vector<'a, arrow_ipc::Block>>;
        type KeyValues<'a> =
            ForwardsUOffset<flatbuffers::Vector<'a, ForwardsUOffset<arrow_ipc::KeyValue<'a>>>>;
        v.visit_table(pos)?
            .visit_field::<MetadataVersion>("version", Footer::VT_VERSION, false)?
            .visit_field::<SchemaField>("schema", Footer::VT_SCHEMA, false)?
            .visit_field::<Blocks>("dictionaries", Footer::VT_DICTIONARIES, false)?
            .visit_field::<Blocks>("recordBatches", Footer::VT_RECORDBATCHES, false)?
            .visit_field::<KeyValues>("custom_metadata", Footer::VT_CUSTOM_METADATA, false)?
            .finish();
        Ok(())
    }
}

/// The footer's `schema` field, verified by the function that verifies the schema of a
/// `Message` (its union variant), so the wasm build links one schema verifier. An error
/// is traced as in the `Schema` variant of the footer's `schema` field.
struct SchemaField;

impl Verifiable for SchemaField {
    fn run_verifier(v: &mut Verifier, pos: usize) -> std::result::Result<(), InvalidFlatbuffer> {
        v.verify_union_variant::<ForwardsUOffset<arrow_ipc::Schema>>("Schema", pos)
    }
}

fn check_blocks(
    what: &str,
    list: Option<flatbuffers::Vector<'_, arrow_ipc::Block>>,
    footer_start: u64,
) -> Result<Vec<Block>> {
    let list = list.unwrap_or_default();
    let mut blocks = Vec::with_capacity(list.len());
    for (index, block) in list.iter().enumerate() {
        blocks.push(check_block(what, index, block, footer_start)?);
    }
    Ok(blocks)
}

fn check_block(
    what: &str,
    index: usize,
    block: &arrow_ipc::Block,
    footer_start: u64,
) -> Result<Block> {
    let (offset, metadata, body) = (block.offset(), block.metaDataLength(), block.bodyLength());
    let parsed = (|| {
        let block = Block {
            offset: u64::try_from(offset).ok()?,
            metadata: u64::try_from(metadata).ok()?,
            body: u64::try_from(body).ok()?,
        };
        let end = block
            .offset
            .checked_add(block.metadata)?
            .checked_add(block.body)?;
        (block.offset >= HEAD_BYTES && end <= footer_start).then_some(block)
    })();
    parsed.ok_or_else(|| {
        QuiverError::invalid(format!(
            "{what} block {index} spans bytes {offset}..{}, outside the file's messages \
             (bytes {HEAD_BYTES}..{footer_start})",
            (offset as i128) + (metadata as i128) + (body as i128)
        ))
    })
}

/// Refuses blocks that list more bytes than the file's messages hold, as blocks that
/// share bytes can: a footer listing one large message many times would have each copy
/// read and decoded again, a small file taking gigabytes. Within the file's size, what
/// the blocks make the reader copy is never more than the file.
fn check_total(dictionaries: &[Block], batches: &[Block], footer_start: u64) -> Result<()> {
    let blocks = dictionaries.iter().chain(batches);
    let listed = blocks.fold(0u64, |sum, b| sum.saturating_add(b.metadata + b.body));
    let held = footer_start.saturating_sub(HEAD_BYTES);
    match listed <= held {
        true => Ok(()),
        false => Err(QuiverError::invalid(format!(
            "the footer's blocks list {listed} bytes of messages, but the file holds \
             {held}: blocks share bytes"
        ))),
    }
}

/// Whether `range` lies inside `given`, whose ranges are in order of their starts and
/// may meet end to start.
fn covered(given: &[Range<u64>], range: &Range<u64>) -> bool {
    let mut reach: Option<u64> = None;
    for r in given {
        match reach {
            Some(end) if r.start <= end => reach = Some(end.max(r.end)),
            _ if r.start <= range.start => reach = Some(r.end),
            _ => {}
        }
        if reach.is_some_and(|end| end >= range.end) {
            return true;
        }
    }
    range.is_empty()
}

/// The schema message and the footer must agree on the fields (their metadata aside).
fn check_same_schema(footer: &Schema, message: &Schema) -> Result<()> {
    if footer.fields() == message.fields() {
        return Ok(());
    }
    let describe = |schema: &Schema| {
        let fields: Vec<String> = schema
            .fields()
            .iter()
            .map(|f| {
                let null = if f.is_nullable() { "" } else { " not null" };
                format!("{}: {}{null}", f.name(), f.data_type())
            })
            .collect();
        fields.join(", ")
    };
    let (mut in_footer, mut in_message) = (describe(footer), describe(message));
    if in_footer == in_message {
        // Same names, types and nullability: the metadata differs, the fields' own or a
        // nested field's (of all the fields, flattened).
        let metadata = |schema: &Schema| {
            let each: Vec<String> = schema
                .flattened_fields()
                .iter()
                .map(|f| format!("{}: {:?}", f.name(), f.metadata()))
                .collect();
            format!("field metadata {}", each.join(", "))
        };
        (in_footer, in_message) = (metadata(footer), metadata(message));
    }
    Err(QuiverError::invalid(format!(
        "the file's schema message differs from its footer: the footer has ({in_footer}), \
         the schema message has ({in_message})"
    )))
}

fn kind_name(kind: MessageHeader) -> String {
    kind.variant_name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("unknown message type {}", kind.0))
}

/// Bytes that should have been the magic, as text where they are printable.
fn describe_bytes(bytes: &[u8]) -> String {
    match bytes.iter().all(u8::is_ascii_graphic) {
        true => bytes.iter().copied().map(char::from).collect(),
        false => format!("bytes {bytes:?}"),
    }
}
