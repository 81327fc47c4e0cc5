/** The MQTT ingest suite against Debian's mosquitto (skipped, saying so, when it is not installed; failing under CI, tests/helpers/ci.ts). */
import { mosquittoPath, startMosquitto } from './helpers/mqtt-brokers.ts';
import { peerMissing } from './helpers/peers.ts';
import { brokerSuite } from './mqtt-suite.ts';

if (mosquittoPath()) brokerSuite('mosquitto', () => startMosquitto());
else peerMissing('MQTT ingest via mosquitto', 'mosquitto is not installed (apt-get install -y mosquitto)');
