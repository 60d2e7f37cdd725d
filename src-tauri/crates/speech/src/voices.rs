//! The voices Perch offers: Piper voices as rhasspy/piper-voices publishes them (v1.0.0, two
//! files each: the ONNX model and its `.onnx.json`), one or more per language of Perch's UI
//! where Piper has one. Each is downloaded once into `models/voices/` in the data folder with
//! `perch-download` (resumable, checked against its SHA-256). Languages without a Piper voice
//! (Japanese, Korean; Chinese and Arabic, whose voices state no licence) speak with espeak-ng.

use std::path::{Path, PathBuf};

use perch_download::{Fetch, Progress, RemoteFile};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::SpeechError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogVoice {
    /// Piper's name for it: `en_US-lessac-medium`.
    pub name: &'static str,
    /// The UI language it serves (`en`, `de`, `pt-BR`, ...).
    pub language: &'static str,
    pub summary: &'static str,
    pub model: RemoteFile,
    pub config: RemoteFile,
}

// SHA-256 and sizes of the files at huggingface.co/rhasspy/piper-voices, tag v1.0.0 (their Git
// LFS ids; the JSON files' own hashes), checked against two published copies each.
pub const CATALOG: &[CatalogVoice] = &[
    CatalogVoice {
        name: "en_US-lessac-medium",
        language: "en",
        summary: "US English, female; clear and even",
        model: RemoteFile::fixed(
            "en_US-lessac-medium.onnx",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/en/en_US/lessac/medium/en_US-lessac-medium.onnx",
            "5efe09e69902187827af646e1a6e9d269dee769f9877d17b16b1b46eeaaf019f",
            63_201_294,
        ),
        config: RemoteFile::fixed(
            "en_US-lessac-medium.onnx.json",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/en/en_US/lessac/medium/en_US-lessac-medium.onnx.json",
            "efe19c417bed055f2d69908248c6ba650fa135bc868b0e6abb3da181dab690a0",
            4_885,
        ),
    },
    CatalogVoice {
        name: "en_US-amy-medium",
        language: "en",
        summary: "US English, female",
        model: RemoteFile::fixed(
            "en_US-amy-medium.onnx",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/en/en_US/amy/medium/en_US-amy-medium.onnx",
            "b3a6e47b57b8c7fbe6a0ce2518161a50f59a9cdd8a50835c02cb02bdd6206c18",
            63_201_294,
        ),
        config: RemoteFile::fixed(
            "en_US-amy-medium.onnx.json",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/en/en_US/amy/medium/en_US-amy-medium.onnx.json",
            "95a23eb4d42909d38df73bb9ac7f45f597dbfcde2d1bf9526fdeaf5466977d77",
            4_882,
        ),
    },
    CatalogVoice {
        name: "en_US-ryan-high",
        language: "en",
        summary: "US English, male; the most natural English voice, twice the size",
        model: RemoteFile::fixed(
            "en_US-ryan-high.onnx",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/en/en_US/ryan/high/en_US-ryan-high.onnx",
            "b3990d7606e183ec8dbfba70a4607074f162de1a0c412e0180d1ff60bb154eca",
            120_786_792,
        ),
        config: RemoteFile::fixed(
            "en_US-ryan-high.onnx.json",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/en/en_US/ryan/high/en_US-ryan-high.onnx.json",
            "c6d3b98f08315cb4bebf0d49d50fc4ff491b503c64b940cd3d5ca28543b48011",
            4_166,
        ),
    },
    CatalogVoice {
        name: "en_GB-alan-medium",
        language: "en-GB",
        summary: "British English, male",
        model: RemoteFile::fixed(
            "en_GB-alan-medium.onnx",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/en/en_GB/alan/medium/en_GB-alan-medium.onnx",
            "0a309668932205e762801f1efc2736cd4b0120329622adf62be09e56339d3330",
            63_201_294,
        ),
        config: RemoteFile::fixed(
            "en_GB-alan-medium.onnx.json",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/en/en_GB/alan/medium/en_GB-alan-medium.onnx.json",
            "c0f0d124e5895c00e7c03b35dcc8287f319a6998a365b182deb5c8e752ee8c1e",
            4_888,
        ),
    },
    CatalogVoice {
        name: "de_DE-thorsten-medium",
        language: "de",
        summary: "German, male",
        model: RemoteFile::fixed(
            "de_DE-thorsten-medium.onnx",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/de/de_DE/thorsten/medium/de_DE-thorsten-medium.onnx",
            "7e64762d8e5118bb578f2eea6207e1a35a8e0c30595010b666f983fc87bb7819",
            63_201_294,
        ),
        config: RemoteFile::fixed(
            "de_DE-thorsten-medium.onnx.json",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/de/de_DE/thorsten/medium/de_DE-thorsten-medium.onnx.json",
            "974adee790533adb273a1ac88f49027d2a1b8f0f2cf4905954a4791e79264e85",
            4_819,
        ),
    },
    CatalogVoice {
        name: "es_ES-davefx-medium",
        language: "es",
        summary: "Spanish (Spain), male",
        model: RemoteFile::fixed(
            "es_ES-davefx-medium.onnx",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/es/es_ES/davefx/medium/es_ES-davefx-medium.onnx",
            "6658b03b1a6c316ee4c265a9896abc1393353c2d9e1bca7d66c2c442e222a917",
            63_201_294,
        ),
        config: RemoteFile::fixed(
            "es_ES-davefx-medium.onnx.json",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/es/es_ES/davefx/medium/es_ES-davefx-medium.onnx.json",
            "0e0dda87c732f6f38771ff274a6380d9252f327dca77aa2963d5fbdf9ec54842",
            4_817,
        ),
    },
    CatalogVoice {
        name: "fr_FR-siwis-medium",
        language: "fr",
        summary: "French, female",
        model: RemoteFile::fixed(
            "fr_FR-siwis-medium.onnx",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/fr/fr_FR/siwis/medium/fr_FR-siwis-medium.onnx",
            "641d1ab097da2b81128c076810edb052b385decc8be3381814802a64a73baf99",
            63_201_294,
        ),
        config: RemoteFile::fixed(
            "fr_FR-siwis-medium.onnx.json",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/fr/fr_FR/siwis/medium/fr_FR-siwis-medium.onnx.json",
            "39479916c2db192b5ac9764daddd0c744d83e023ad890c6976c0633ae4df8959",
            4_875,
        ),
    },
    CatalogVoice {
        name: "ru_RU-dmitri-medium",
        language: "ru",
        summary: "Russian, male",
        model: RemoteFile::fixed(
            "ru_RU-dmitri-medium.onnx",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/ru/ru_RU/dmitri/medium/ru_RU-dmitri-medium.onnx",
            "f073356ebc4bd0f80c5af58df2953a5988bd5bdab1eb38635ce960b071fbefcb",
            63_201_294,
        ),
        config: RemoteFile::fixed(
            "ru_RU-dmitri-medium.onnx.json",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/ru/ru_RU/dmitri/medium/ru_RU-dmitri-medium.onnx.json",
            "667ef3117bc642c2892dff7690d8bdc8ca4228aeaa783b2dc1416df632855e0d",
            4_824,
        ),
    },
    CatalogVoice {
        name: "pt_BR-faber-medium",
        language: "pt-BR",
        summary: "Portuguese (Brazil), male",
        model: RemoteFile::fixed(
            "pt_BR-faber-medium.onnx",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/pt/pt_BR/faber/medium/pt_BR-faber-medium.onnx",
            "858555e3a064209c57088fe6bd70c4c3dc54d03eaa00c45d5ecaf43a33f95aa7",
            63_201_294,
        ),
        config: RemoteFile::fixed(
            "pt_BR-faber-medium.onnx.json",
            "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/pt/pt_BR/faber/medium/pt_BR-faber-medium.onnx.json",
            "7e694de195ae3fc36dd732c445eb04fb49b649854893cb5506b978f0d50a1d6f",
            4_855,
        ),
    },
];

/// The voice a language speaks with when the user chose none: the first of its language in the
/// catalogue (`en-GB` falls back to `en`).
pub fn default_for(language: &str) -> Option<&'static CatalogVoice> {
    let exact = CATALOG.iter().find(|v| v.language.eq_ignore_ascii_case(language));
    let base = language.split(['-', '_']).next().unwrap_or(language);
    exact.or_else(|| CATALOG.iter().find(|v| v.language.eq_ignore_ascii_case(base)))
}

impl CatalogVoice {
    pub fn find(name: &str) -> Option<&'static CatalogVoice> {
        CATALOG.iter().find(|v| v.name.eq_ignore_ascii_case(name.trim()))
    }

    fn files(&self) -> [RemoteFile; 2] {
        [self.model.clone(), self.config.clone()]
    }

    pub fn size(&self) -> u64 {
        self.model.size + self.config.size
    }
}

/// A voice as Settings lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct VoiceView {
    pub name: String,
    pub language: String,
    pub summary: String,
    /// Bytes to download.
    pub size: u64,
    pub state: VoiceState,
    /// Bytes of an interrupted download, resumed by the next.
    pub partial: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum VoiceState {
    Absent,
    Partial,
    Ready,
}

/// The voices folder.
#[derive(Debug, Clone)]
pub struct VoiceStore {
    dir: PathBuf,
}

impl VoiceStore {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    pub fn in_data_dir(data_dir: &Path) -> Self {
        Self::new(data_dir.join("models").join("voices"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn model_path(&self, voice: &CatalogVoice) -> PathBuf {
        self.dir.join(&*voice.model.name)
    }

    pub fn is_ready(&self, voice: &CatalogVoice) -> bool {
        perch_download::missing(&voice.files(), &self.dir).is_empty()
    }

    pub fn view(&self, voice: &CatalogVoice) -> VoiceView {
        let partial = perch_download::partial_bytes(&voice.files(), &self.dir);
        VoiceView {
            name: voice.name.to_owned(),
            language: voice.language.to_owned(),
            summary: voice.summary.to_owned(),
            size: voice.size(),
            state: if self.is_ready(voice) {
                VoiceState::Ready
            } else if partial > 0 {
                VoiceState::Partial
            } else {
                VoiceState::Absent
            },
            partial,
        }
    }

    pub fn list(&self) -> Vec<VoiceView> {
        CATALOG.iter().map(|v| self.view(v)).collect()
    }

    /// Downloads a catalogue voice (both files), resuming what an earlier attempt left.
    pub async fn download(
        &self,
        name: &str,
        base_override: Option<&str>,
        cancel: &CancellationToken,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<VoiceView, SpeechError> {
        let voice =
            CatalogVoice::find(name).ok_or_else(|| SpeechError::UnknownVoice { name: name.to_owned() })?;
        let client = perch_foundation::http::client();
        let options = Fetch { base_override, cancel: Some(cancel) };
        perch_download::fetch(&client, &voice.files(), &self.dir, options, progress).await?;
        Ok(self.view(voice))
    }

    pub fn delete(&self, name: &str) -> Result<VoiceView, SpeechError> {
        let voice =
            CatalogVoice::find(name).ok_or_else(|| SpeechError::UnknownVoice { name: name.to_owned() })?;
        perch_download::remove(&voice.files(), &self.dir)?;
        Ok(self.view(voice))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_ui_language_with_a_piper_voice_has_a_default() {
        assert_eq!(default_for("en").map(|v| v.name), Some("en_US-lessac-medium"));
        assert_eq!(default_for("en-GB").map(|v| v.name), Some("en_GB-alan-medium"));
        assert_eq!(default_for("pt-BR").map(|v| v.name), Some("pt_BR-faber-medium"));
        assert_eq!(default_for("de-AT").map(|v| v.name), Some("de_DE-thorsten-medium"));
        assert!(default_for("ja").is_none());
    }

    #[test]
    fn a_voice_is_deleted_with_what_an_interrupted_download_left() {
        let dir = tempfile::tempdir().unwrap();
        let store = VoiceStore::new(dir.path().to_path_buf());
        let voice = &CATALOG[0];
        std::fs::write(dir.path().join(&*voice.config.name), b"{}").unwrap();
        std::fs::write(perch_download::part_path(dir.path(), &voice.model), vec![0u8; 1000]).unwrap();
        let view = store.view(voice);
        assert_eq!((view.state, view.partial), (VoiceState::Partial, 1000));
        assert_eq!(store.delete(voice.name).unwrap().state, VoiceState::Absent);
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "nothing of it is left");
        assert!(matches!(store.delete("nobody"), Err(SpeechError::UnknownVoice { .. })));
    }

    #[test]
    fn the_catalogue_is_well_formed() {
        for voice in CATALOG {
            for file in [&voice.model, &voice.config] {
                assert_eq!(file.sha256.len(), 64, "{}", file.name);
                assert!(file.sha256.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
                assert!(file.url.ends_with(&*file.name), "{}", file.url);
                assert!(file.url.starts_with("https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/"));
            }
            assert_eq!(voice.config.name, format!("{}.json", voice.model.name));
        }
    }
}
