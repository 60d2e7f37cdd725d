//! The tray icon: Show/Hide, New chat, Logs, Quit, in the UI's language.

use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Wry};
use tauri_specta::Event;

use crate::events::{NavigateRequested, Route};
use crate::window;

/// The menu's items, kept so a change of language relabels them.
struct TrayItems(Vec<MenuItem<Wry>>);

const IDS: [&str; 4] = ["toggle", "new_chat", "logs", "quit"];

/// `language` is the chosen UI language (a BCP 47 tag) or `None` to follow the system.
pub fn create(app: &AppHandle, language: Option<&str>) -> tauri::Result<()> {
    let items = IDS
        .iter()
        .zip(labels(language))
        .map(|(id, label)| MenuItem::with_id(app, *id, label, true, None::<&str>))
        .collect::<tauri::Result<Vec<_>>>()?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&items[0], &items[1], &items[2], &separator, &items[3]])?;
    let mut tray = TrayIconBuilder::with_id("perch")
        .tooltip("Perch")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| handle(app, event.id().as_ref()));
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    app.manage(TrayItems(items));
    Ok(())
}

/// Relabels the menu after the language setting changed (no tray: nothing to do).
pub fn relabel(app: &AppHandle, language: Option<&str>) {
    let Some(items) = app.try_state::<TrayItems>() else { return };
    for (item, label) in items.0.iter().zip(labels(language)) {
        if let Err(e) = item.set_text(label) {
            tracing::warn!(error = %e, "could not relabel the tray menu");
        }
    }
}

/// The menu's words in the languages the UI speaks (its catalogues live in ui/src/locales; these
/// four are the only words the shell draws itself). Matched by language code, as the UI does.
fn labels(language: Option<&str>) -> [&'static str; 4] {
    let locale = language.map(str::to_owned).or_else(perch_core::locale::system_locale).unwrap_or_default();
    let code = locale.split(['-', '_', '.', '@']).next().unwrap_or_default().to_ascii_lowercase();
    match code.as_str() {
        "zh" => ["显示/隐藏", "新对话", "日志…", "退出 Perch"],
        "ja" => ["表示/非表示", "新しいチャット", "ログ…", "Perch を終了"],
        "ko" => ["보이기/숨기기", "새 채팅", "로그…", "Perch 종료"],
        "de" => ["Zeigen/Verbergen", "Neuer Chat", "Protokolle…", "Perch beenden"],
        "fr" => ["Afficher/Masquer", "Nouvelle conversation", "Journaux…", "Quitter Perch"],
        "es" => ["Mostrar/Ocultar", "Nuevo chat", "Registros…", "Salir de Perch"],
        "pt" => ["Mostrar/Ocultar", "Nova conversa", "Logs…", "Sair do Perch"],
        "ru" => ["Показать/Скрыть", "Новый чат", "Журналы…", "Выйти из Perch"],
        "ar" => ["إظهار/إخفاء", "محادثة جديدة", "السجلات…", "إنهاء Perch"],
        _ => ["Show/Hide", "New chat", "Logs…", "Quit Perch"],
    }
}

fn handle(app: &AppHandle, id: &str) {
    let result = match id {
        "toggle" => window::toggle(app),
        "new_chat" => window::show(app).map(|()| {
            let _ = NavigateRequested { route: Route::NewChat }.emit(app);
        }),
        "logs" => window::show(app).map(|()| {
            let _ = NavigateRequested { route: Route::Logs }.emit(app);
        }),
        "quit" => {
            app.exit(0);
            Ok(())
        }
        _ => Ok(()),
    };
    if let Err(e) = result {
        tracing::warn!(error = %e, menu = id, "tray action failed");
    }
}

#[cfg(test)]
mod tests {
    use super::labels;

    #[test]
    fn the_menu_follows_the_chosen_language_by_its_code() {
        assert_eq!(labels(Some("de"))[1], "Neuer Chat");
        assert_eq!(labels(Some("pt-BR"))[3], "Sair do Perch");
        assert_eq!(labels(Some("zh-CN"))[0], "显示/隐藏");
        assert_eq!(labels(Some("en-GB"))[3], "Quit Perch");
        assert_eq!(labels(Some("sv"))[1], "New chat");
    }
}
