import journal from './meta/_journal.json';
import m0000 from './0000_tasks.sql';
import m0001 from './0001_turns.sql';
import m0002 from './0002_plugin_migrations.sql';
import m0003 from './0003_rounds.sql';
import m0004 from './0004_subtask_ordinal.sql';
import m0005 from './0005_bounded_state.sql';
import m0006 from './0006_conversations.sql';
import m0007 from './0007_task_events.sql';
import m0008 from './0008_delivery.sql';
import m0009 from './0009_usage.sql';
import m0010 from './0010_task_totals.sql';
import m0011 from './0011_subtask_calls.sql';
import m0012 from './0012_push_config_progress.sql';
import m0013 from './0013_erasure.sql';
import m0014 from './0014_usage_details.sql';

  export default {
    journal,
    migrations: {
      m0000,
m0001,
m0002,
m0003,
m0004,
m0005,
m0006,
m0007,
m0008,
m0009,
m0010,
m0011,
m0012,
m0013,
m0014
    }
  }
  