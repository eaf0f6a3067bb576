export { PlauditClient, type CallOptions, type ClientOptions, type CountOptions, type RequestOptions } from "./client.js";
export { PlauditError, type ErrorCode } from "./errors.js";
export type {
  CounterType,
  Counts,
  CountResult,
  CountsResult,
  ErrorBody,
  ErrorDetail,
  EventResult,
  HasLikedResult,
  HistoryResult,
  Id,
  ItemRef,
  ItemType,
  LikeResult,
  LiveMessage,
  SaveResult,
} from "./types.js";
