/**
 * `ledgerloop/codec`: payload encryption (AES-256-GCM, a key ring with rotation) for clients, workers and the
 * codec server the Temporal Web UI decodes through. A client and its workers must share the keys.
 */
export {
  AesGcmPayloadCodec,
  CodecKeyConfigError,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadDecryptionError,
  validateKeyRing,
  type AesGcmCodecOptions,
  type CodecKeyRing,
  type PayloadDecryptionReason,
} from '../../src/codec/aes-gcm-codec';
export {
  CODEC_KEY_ID_ENV,
  CODEC_KEYS_ENV,
  CODEC_KEYS_FILE_ENV,
  CODEC_STRICT_ENV,
  codecFromEnv,
  codecStrictFromEnv,
  dataConverterFromEnv,
  generateCodecKeys,
  ledgerloopDataConverter,
  parseCodecKeys,
} from '../../src/codec/data-converter';
export {
  MessageGuardCodec,
  workerDataConverter,
  type MessageGuardOptions,
  type RefusedPayload,
} from '../../src/codec/message-guard';
export {
  checkPayloadEncryption,
  encryptsPayloads,
  PayloadsInClearError,
  TokenInClearError,
  type EncryptionCheckOptions,
} from '../client/token-transport';
