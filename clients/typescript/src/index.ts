export { PlauditClient, type CallOptions, type ClientOptions, type RequestOptions } from "./client.js";
export { PlauditError, type ErrorCode } from "./errors.js";
export type {
  BlockResult,
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
  ItemSettingsInput,
  ItemSettingsResult,
  ItemType,
  LikeResult,
  SaveResult,
  ShownCounts,
  Visibility,
} from "./types.js";
