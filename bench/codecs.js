// Registers the JS codecs that apache-arrow JS and flechette need for compressed bodies
// (they ship none): lz4js for LZ4_FRAME and fzstd for ZSTD. fzstd only decodes, which is
// all the reader benchmark needs.
//
// fzstd returns a view 12 bytes into a larger buffer, which neither Arrow JS 21 nor
// flechette 2.7 can use for 8-byte types ("start offset of BigInt64Array should be a
// multiple of 8"), so both get an aligned copy when needed, as an application would have
// to do.
const aligned = (bytes) => (bytes.byteOffset % 8 === 0 ? bytes : bytes.slice());

export function registerCodecs({ arrow, flechette, lz4, fzstd }) {
  const lz4Codec = { encode: (data) => lz4.compress(data), decode: (data) => lz4.decompress(data) };
  arrow.compressionRegistry.set(arrow.CompressionType.LZ4_FRAME, lz4Codec);
  arrow.compressionRegistry.set(arrow.CompressionType.ZSTD, { decode: (data) => aligned(fzstd.decompress(data)) });
  flechette.setCompressionCodec(flechette.CompressionType.LZ4_FRAME, lz4Codec);
  flechette.setCompressionCodec(flechette.CompressionType.ZSTD, { decode: (data) => aligned(fzstd.decompress(data)) });
}
