export { PlauditClient, type CallOptions, type ClientOptions, type CountOptions, type RequestOptions } from "./client.js";
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
  HistoryResult,
  Id,
  ItemRef,
  ItemSettingsInput,
  ItemSettingsResult,
  ItemType,
  LikeResult,
  LiveMessage,
  SaveResult,
  ShownCounts,
  Visibility,
} from "./types.js";
