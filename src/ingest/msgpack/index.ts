/** MessagePack write payloads (columnar and row forms) -> ColumnBatches. */
export { type MsgpackWriteOptions, parseMsgpackWrite } from './write-parser.ts';
