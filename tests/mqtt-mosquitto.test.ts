/** The MQTT ingest suite against Debian's mosquitto (skipped, saying so, when it is not installed). */
import { describe, test } from 'bun:test';
import { mosquittoPath, startMosquitto } from './helpers/mqtt-brokers.ts';
import { brokerSuite } from './mqtt-suite.ts';

if (mosquittoPath()) brokerSuite('mosquitto', () => startMosquitto());
else
  describe('MQTT ingest via mosquitto', () => {
    test.skip('mosquitto is not installed (apt-get install -y mosquitto); suite skipped', () => {});
  });
