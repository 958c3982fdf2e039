// Redaction detectors for PERSON: names after an honorific (`Dr. <PERSON>`) and, in aggressive
// mode, after cue phrases (`my name is`, `Regards,` ...). Bare names in prose are not detected.
import { PRIO, scan, type Span, span } from './redact-spans.ts';

// PERSON

const NAME_STOP =
  '(?!(?:The|A|An|And|Or|But|In|On|At|To|For|Of|With|From|By|As|Is|Was|Has|Had|Said|Says|Will|Would|Can|I|We|He|She|They|It|This|That|Who|What|When|Where|Why|How|Us|Our|Your|You)(?![\\p{L}\\p{N}]))';
const NAME_TOKEN = String.raw`${NAME_STOP}\p{Lu}[\p{L}'’-]*`;
const INITIAL = String.raw`\p{Lu}\.`;
const PARTICLE = '(?:van|von|der|den|de|del|della|di|da|du|la|le|bin|ibn|al|el|ter|ten)';
const NAME = String.raw`(?:(?:${INITIAL}\s?){0,3}${NAME_TOKEN}(?:\s(?:${PARTICLE}\s){0,2}(?:${INITIAL}\s?){0,2}${NAME_TOKEN}){0,2})`;
const HONORIFIC_RE = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sir|Dame|Mme|Mlle|Herr|Frau)(?:\.\s?|\s)(${NAME})`,
  'gdu',
);
const CUE_NAME_RE = new RegExp(
  String.raw`(?<![\p{L}])(?:(?<one>[Mm]y name is|[Nn]ame\s*:|(?:Attn|Attention|Author|Authored by|Written by|Signed|Sincerely|(?:Best |Kind |Warm )?[Rr]egards|Cheers)\s*[:,]?)|(?<two>[Cc]ontact(?:\s*:)?))(?:\s*[*_]{1,2})?\s+(?<name>${NAME})`,
  'gdu',
);
const GENERIC_AFTER_CONTACT =
  /^(?:Us|Me|Support|Sales|Customer|Customers|Service|Services|Team|Today|Now|Info|Information|Help|Details|Form|Page|Center|Centre|Desk|Office|Department|Our|Your|The)$/;

/** A name span, shrunk to drop a trailing possessive ('s). */
function nameSpan(start: number, end: number, text: string): Span {
  const s = text.slice(start, end);
  const pos = /['’]s$/.exec(s);
  return span(start, pos ? end - 2 : end, 'PERSON', PRIO.person);
}

export function findHonorificNames(text: string): Span[] {
  return scan(HONORIFIC_RE, text, (m) => {
    const [s, e] = m.indices![1];
    return nameSpan(s, e, text);
  });
}

export function findCueNames(text: string): Span[] {
  return scan(CUE_NAME_RE, text, (m) => {
    const name = m.groups!.name;
    if (m.groups!.two !== undefined) {
      const words = name.split(/\s+/).filter((w) => !/^\p{Lu}\.$/u.test(w));
      if (words.length < 2 || words.some((w) => GENERIC_AFTER_CONTACT.test(w))) return null;
    }
    const [s, e] = m.indices!.groups!.name;
    return nameSpan(s, e, text);
  });
}
