use super::*;
use crate::orders::snake_case;

#[test]
fn each_code_reads_as_its_name_in_snake_case_and_is_an_error_status() {
    for code in Code::FIXED {
        assert_eq!(code.as_str(), snake_case(&format!("{code:?}")));
        assert!(code.status().as_u16() >= 400, "{code:?}");
    }
    assert_eq!(Code::invalid("limit").as_str(), "invalid_limit");
}

/// The macro asks every code for its sentence; this checks that each one is a sentence
/// a caller can act on, not a placeholder.
#[test]
fn every_code_says_in_one_sentence_what_it_means() {
    let family = Code::invalid("quantity");
    for code in Code::FIXED.iter().chain([&family]) {
        let meaning = code.meaning();
        assert!(
            meaning.len() >= 20 && meaning.len() <= 200,
            "{code:?}: {meaning:?}"
        );
        assert!(
            meaning.starts_with(|c: char| c.is_alphabetic() || c == '`')
                && meaning.ends_with('.')
                && meaning.matches(". ").count() == 0
                && !meaning.contains("  ")
                && !meaning.contains('\n'),
            "{code:?}: say it in one plain sentence, not {meaning:?}"
        );
    }
}

#[test]
fn a_rejected_order_answers_the_status_its_kind_of_rejection_says() {
    for &rejection in RejectionCode::ALL {
        let code = Code::from(rejection);
        assert_eq!(code.as_str(), rejection.as_str());
        let status = if rejection.is_retryable() {
            StatusCode::SERVICE_UNAVAILABLE
        } else if rejection.is_conflict() {
            StatusCode::CONFLICT
        } else {
            StatusCode::BAD_REQUEST
        };
        assert_eq!(code.status(), status, "{rejection}");
    }
}
