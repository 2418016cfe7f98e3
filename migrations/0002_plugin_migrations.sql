CREATE TABLE `plugin_migrations` (
	`plugin` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL,
	`updated_at` integer NOT NULL
);
