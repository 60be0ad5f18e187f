"""The Team judging page as named panels: the page's state and first steps (:mod:`.page`), one question and one
chunk at a time (:mod:`.judge`), and the raters' agreement with the disagreement queue (:mod:`.agreement`)."""
