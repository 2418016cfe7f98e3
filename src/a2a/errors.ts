import { A2A_ERROR_CODE } from "@a2a-js/sdk/errors";

/**
 * A JSON-RPC error the edge or a Durable Object answers with. It crosses the
 * DO RPC boundary as a plain `{ error: { code, message } }` value instead of a
 * thrown exception: workerd re-creates thrown errors as bare `Error`s on the
 * caller's side and drops custom fields, so the code would be lost.
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

export interface RpcErrorValue {
  code: number;
  message: string;
  data?: unknown;
}

export const ErrorCode = A2A_ERROR_CODE;

export const taskNotFound = (id: string) =>
  new RpcError(ErrorCode.TASK_NOT_FOUND, `Task not found: ${JSON.stringify(id)}`);

export const taskNotCancelable = (id: string, state: string) =>
  new RpcError(
    ErrorCode.TASK_NOT_CANCELABLE,
    `Task ${JSON.stringify(id)} is ${state} and can no longer be canceled`,
  );

export const invalidParams = (message: string) => new RpcError(ErrorCode.INVALID_PARAMS, message);

export const unsupportedOperation = (message: string) =>
  new RpcError(ErrorCode.UNSUPPORTED_OPERATION, message);

export function toRpcErrorValue(error: RpcError): RpcErrorValue {
  return error.data === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, data: error.data };
}
