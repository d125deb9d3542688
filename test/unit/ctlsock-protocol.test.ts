/**
 * The control socket's pure parts: path sanitising (gocryptfs's
 * TestSanitizePath cases), the request/response rules, Go's texts for bad
 * JSON and bad base64, and the JSON encoding of answers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerRequest, encodeResponse, goJsonError, goJsonString, sanitizePath, type PathTranslator } from '../../src/ctlsock/index.js';
import { b64ErrorOffset } from '../../src/names/index.js';

test('sanitizePath: the cases of gocryptfs TestSanitizePath', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['.', ''],
    ['/', ''],
    ['foo', 'foo'],
    ['/foo', 'foo'],
    ['foo/', 'foo'],
    ['/foo/', 'foo'],
    ['/foo/./foo', 'foo/foo'],
    ['./', ''],
    ['..', ''],
    ['foo/../..', ''],
    ['foo/../../aaaaaa', ''],
    ['/foo/../../aaaaaa', ''],
    ['/////', ''],
    ['/dir1//dir2/./nested.txt', 'dir1/dir2/nested.txt'],
    ['a/b/../c', 'a/c'],
  ];
  for (const [input, want] of cases) assert.equal(sanitizePath(input), want, JSON.stringify(input));
});

const echo: PathTranslator = {
  encryptPath: (p) => `E(${p})`,
  decryptPathBytes: async (p) => {
    if (p === 'missing') throw Object.assign(new Error('x'), { code: 'ENOENT' });
    if (p === 'notdir') throw Object.assign(new Error('x'), { code: 'ENOTDIR' });
    return Buffer.from(`D(${p})`);
  },
};
const ask = async (req: string): Promise<string> => encodeResponse(await answerRequest(Buffer.from(req), echo));

test('requests and answers', async () => {
  assert.equal(await ask('{"EncryptPath":"a"}'), '{"Result":"E(a)","ErrNo":0,"ErrText":"","WarnText":""}\n');
  assert.equal(await ask('{"decryptPATH":"b"}'), '{"Result":"D(b)","ErrNo":0,"ErrText":"","WarnText":""}\n', 'keys match case-insensitively');
  assert.equal(await ask('{"DecryptPath":"missing"}'), '{"Result":"","ErrNo":2,"ErrText":"no such file or directory","WarnText":""}\n');
  assert.equal(await ask('{"DecryptPath":"notdir"}'), '{"Result":"","ErrNo":-1,"ErrText":"not a directory","WarnText":""}\n');
  assert.equal(await ask('{"EncryptPath":"a","DecryptPath":"b"}'), '{"Result":"","ErrNo":-1,"ErrText":"Ambiguous","WarnText":""}\n');
  assert.equal(await ask('{}'), '{"Result":"","ErrNo":-1,"ErrText":"Empty input","WarnText":""}\n');
  assert.equal(await ask('null'), '{"Result":"","ErrNo":-1,"ErrText":"Empty input","WarnText":""}\n');
  assert.equal(
    await ask('{"EncryptPath":"../x"}'),
    '{"Result":"","ErrNo":-1,"ErrText":"Empty input after canonicalization","WarnText":"Non-canonical input path \'../x\' has been interpreted as \'\'."}\n',
  );
  assert.equal(await ask('this is not json'), '{"Result":"","ErrNo":-1,"ErrText":"JSON Unmarshal error: invalid character \'h\' in literal true (expecting \'r\')","WarnText":""}\n');
  assert.equal(await ask('{"EncryptPath":5}'), '{"Result":"","ErrNo":-1,"ErrText":"JSON Unmarshal error: json: cannot unmarshal number into Go struct field RequestStruct.EncryptPath of type string","WarnText":""}\n');
  assert.equal(await ask('{"EncryptPath":"<&>"}'), '{"Result":"E(\\u003c\\u0026\\u003e)","ErrNo":0,"ErrText":"","WarnText":""}\n', 'Go escapes <, >, &');
});

test("Go's JSON syntax error texts", () => {
  assert.equal(goJsonError('nope'), "invalid character 'o' in literal null (expecting 'u')");
  assert.equal(goJsonError('x'), "invalid character 'x' looking for beginning of value");
  assert.equal(goJsonError('  '), 'unexpected end of JSON input');
  assert.equal(goJsonError('tr'), 'unexpected end of JSON input');
});

test("where Go's base64 decoder reports illegal data", () => {
  assert.equal(b64ErrorOffset('does-not-exist-AAAAAAAAAAAAAAAAAAAAAA', true), 36, 'a lone last character');
  assert.equal(b64ErrorOffset('gocryptfs.longname.x', true), 9, 'the first illegal character');
  assert.equal(b64ErrorOffset('8rFYouUd3gksl_wgUtQhEQ', true), null);
  assert.equal(b64ErrorOffset('8rFYouUd3gksl_wgUtQhEQ==', true), 22, '= is illegal without padding');
  assert.equal(b64ErrorOffset('8rFYouUd3gksl_wgUtQhEQ==', false), null);
  assert.equal(b64ErrorOffset('8rFYouUd3gksl_wgUtQhEQ', false), 20, 'padded: a short last group');
});

test("goJsonString: bytes escaped as Go 1.19's json.Marshal escapes them", () => {
  const cases: [string, string][] = [
    ['61ff62', '"a\\ufffdb"'],
    ['c0af', '"\\ufffd\\ufffd"'], // overlong '/'
    ['eda080', '"\\ufffd\\ufffd\\ufffd"'], // a surrogate
    ['f4908080', '"\\ufffd\\ufffd\\ufffd\\ufffd"'], // above U+10FFFF
    ['e282', '"\\ufffd\\ufffd"'], // cut short
    ['efbfbd', '"\ufffd"'], // a real U+FFFD goes as is
    ['e280a8e280a9', '"\\u2028\\u2029"'],
    ['0108090c0a0d1f7f', '"\\u0001\\u0008\\t\\u000c\\n\\r\\u001f\x7f"'],
    ['223c263e5c', '"\\"\\u003c\\u0026\\u003e\\\\"'],
    ['f09f9880c3a9', '"\u{1f600}\u00e9"'],
    ['', '""'],
  ];
  for (const [hex, want] of cases) assert.equal(goJsonString(Buffer.from(hex, 'hex')), want, hex);
  assert.equal(encodeResponse({ Result: Buffer.from('78ff', 'hex'), ErrNo: 0, ErrText: '', WarnText: '<' }), '{"Result":"x\\ufffd","ErrNo":0,"ErrText":"","WarnText":"\\u003c"}\n');
});
