/** The six AEGIS variants of draft-irtf-cfrg-aegis-aead and their parameters. */
import type { AegisFamily, AegisLanes } from './aegis-ts.js';

export type AegisVariant = 'aegis128l' | 'aegis128x2' | 'aegis128x4' | 'aegis256' | 'aegis256x2' | 'aegis256x4';

export interface AegisVariantInfo {
  readonly name: AegisVariant;
  /** Display name as in the draft, e.g. 'AEGIS-256X2'. */
  readonly title: string;
  readonly family: AegisFamily;
  readonly lanes: AegisLanes;
  readonly keySize: number;
  readonly nonceSize: number;
  /** The variant number the native addon uses (native/crypto/aegis.c `enum variant`). */
  readonly nativeId: number;
}

const info = (name: AegisVariant, title: string, family: AegisFamily, lanes: AegisLanes, nativeId: number): AegisVariantInfo => ({
  name,
  title,
  family,
  lanes,
  keySize: family === '128' ? 16 : 32,
  nonceSize: family === '128' ? 16 : 32,
  nativeId,
});

export const AEGIS_VARIANTS: Readonly<Record<AegisVariant, AegisVariantInfo>> = {
  aegis128l: info('aegis128l', 'AEGIS-128L', '128', 1, 0),
  aegis128x2: info('aegis128x2', 'AEGIS-128X2', '128', 2, 1),
  aegis128x4: info('aegis128x4', 'AEGIS-128X4', '128', 4, 2),
  aegis256: info('aegis256', 'AEGIS-256', '256', 1, 3),
  aegis256x2: info('aegis256x2', 'AEGIS-256X2', '256', 2, 4),
  aegis256x4: info('aegis256x4', 'AEGIS-256X4', '256', 4, 5),
};
