export { PlauditClient, type CallOptions, type ClientOptions, type RequestOptions } from "./client.js";
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
  Id,
  ItemRef,
  ItemType,
  LikeResult,
  SaveResult,
} from "./types.js";
