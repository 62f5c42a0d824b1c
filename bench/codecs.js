// Registers the JS codecs that apache-arrow JS and flechette need for compressed bodies
// (they ship none): lz4js for LZ4_FRAME and fzstd for ZSTD. fzstd only decodes, which is
// all the reader benchmark needs.
export function registerCodecs({ arrow, flechette, lz4, fzstd }) {
  const lz4Codec = { encode: (data) => lz4.compress(data), decode: (data) => lz4.decompress(data) };
  const zstdCodec = { decode: (data) => fzstd.decompress(data) };
  arrow.compressionRegistry.set(arrow.CompressionType.LZ4_FRAME, lz4Codec);
  arrow.compressionRegistry.set(arrow.CompressionType.ZSTD, zstdCodec);
  flechette.setCompressionCodec(flechette.CompressionType.LZ4_FRAME, lz4Codec);
  flechette.setCompressionCodec(flechette.CompressionType.ZSTD, zstdCodec);
}
