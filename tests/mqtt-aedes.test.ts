/** The MQTT ingest suite against aedes, started in this process. */
import { startAedes } from './helpers/mqtt-brokers.ts';
import { brokerSuite } from './mqtt-suite.ts';

brokerSuite('aedes', () => startAedes(), { serialQos2: true });
