import { startS3rver, S3RVER_KEY } from '../../tests/helpers/s3rver.ts';
import { S3Backend } from '../../src/storage/s3/s3-backend.ts';
const s3 = await startS3rver(['b']);
const sdk = new S3Backend({ bucket: 'b', region: 'us-east-1', endpoint: s3.endpoint, pathStyle: true, accessKey: 'S3RVER', secretKey: 'x' });
try { await sdk.upload('a/x', new Uint8Array(10)); console.log('sdk badsecret ok'); } catch (e: any) { console.log('sdk badsecret', e.message); }
const b = new Bun.S3Client({ bucket: 'b', region: 'us-east-1', endpoint: s3.endpoint, accessKeyId: 'nobody', secretAccessKey: 'S3RVER' });
try { await b.write('a/x', new Uint8Array(10)); console.log('bun badid ok'); } catch (e: any) { console.log('bun badid', e.code, e.message); }
await s3.close();
