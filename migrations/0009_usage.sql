CREATE TABLE `usage_days` (
	`day` text PRIMARY KEY NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`model_calls` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE `turns` ADD `input_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `turns` ADD `output_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `turns` ADD `model_calls` integer DEFAULT 0 NOT NULL;