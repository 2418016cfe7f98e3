CREATE TABLE `conversation_entries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`conversation_id` text NOT NULL,
	`task_id` text NOT NULL,
	`entry_key` text NOT NULL,
	`kind` text NOT NULL,
	`message_json` text NOT NULL,
	`tokens` integer NOT NULL,
	`committed` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `conversation_entries_entry_key_unique` ON `conversation_entries` (`entry_key`);--> statement-breakpoint
CREATE INDEX `conversation_entries_window` ON `conversation_entries` (`conversation_id`,`committed`,`id`);--> statement-breakpoint
CREATE INDEX `conversation_entries_by_task` ON `conversation_entries` (`task_id`);--> statement-breakpoint
CREATE TABLE `conversation_state` (
	`conversation_id` text PRIMARY KEY NOT NULL,
	`summary_entry_id` integer,
	`folded_through` integer DEFAULT 0 NOT NULL,
	`compacting_until` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `hitl_requests` (
	`request_id` text PRIMARY KEY NOT NULL,
	`task_id` text NOT NULL,
	`round` integer NOT NULL,
	`request_json` text NOT NULL,
	`target_json` text NOT NULL,
	`expires_at` integer NOT NULL,
	`status` text NOT NULL,
	`answer_json` text,
	`resumed_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `hitl_requests_by_task` ON `hitl_requests` (`task_id`,`status`);--> statement-breakpoint
CREATE TABLE `tool_calls` (
	`task_id` text NOT NULL,
	`call_key` text NOT NULL,
	`tool_name` text NOT NULL,
	`status` text NOT NULL,
	`output_json` text,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	PRIMARY KEY(`task_id`, `call_key`)
);
